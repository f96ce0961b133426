#include "sinks/avro/avro_sink.h"

#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace sluice::avro {
namespace {

constexpr CallOutcome kOutcomes[] = {CallOutcome::ok, CallOutcome::refused, CallOutcome::unreachable,
                                     CallOutcome::no_answer};

// The CAs of a PKCS12 truststore (Flume's, made by keytool) into `store`.
void load_truststore(const config::ComponentConfig& component, const AvroSinkConfig& c, X509_STORE* store) {
  std::unique_ptr<FILE, decltype(&fclose)> file(fopen(c.truststore.c_str(), "rb"), &fclose);
  if (!file) component.fail("truststore", c.truststore + ": cannot be read");
  std::unique_ptr<PKCS12, decltype(&PKCS12_free)> p12(d2i_PKCS12_fp(file.get(), nullptr), &PKCS12_free);
  if (!p12)
    component.fail("truststore", c.truststore +
                                     " is not a PKCS12 file (a JKS one? convert it: keytool -importkeystore "
                                     "-srckeystore <jks> -destkeystore <p12> -deststoretype PKCS12)");
  EVP_PKEY* key = nullptr;
  X509* certificate = nullptr;
  STACK_OF(X509)* cas = nullptr;
  const char* password = c.truststore_password.empty() ? nullptr : c.truststore_password.c_str();
  if (PKCS12_parse(p12.get(), password, &key, &certificate, &cas) != 1)
    component.fail("truststore-password", "does not open " + c.truststore + ": " + openssl_reason());
  size_t added = 0;
  if (certificate && X509_STORE_add_cert(store, certificate) == 1) ++added;
  for (int i = 0; cas && i < sk_X509_num(cas); ++i)
    if (X509_STORE_add_cert(store, sk_X509_value(cas, i)) == 1) ++added;
  EVP_PKEY_free(key);
  X509_free(certificate);
  sk_X509_pop_free(cas, X509_free);
  if (added == 0) component.fail("truststore", c.truststore + " holds no certificate");
}

// The client's TLS context (null without ssl): TLS 1.2 or 1.3; the server's chain verified
// against the truststore, ssl.ca or the system's CAs, unless trust-all-certs.
std::shared_ptr<SSL_CTX> client_tls(const config::ComponentConfig& component, const AvroSinkConfig& c) {
  if (!c.ssl) return nullptr;
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
  if (!ctx) component.fail("ssl", "OpenSSL: " + openssl_reason());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (c.trust_all_certs) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
    return ctx;
  }
  if (!c.truststore.empty())
    load_truststore(component, c, SSL_CTX_get_cert_store(ctx.get()));
  else if (!c.ssl_ca.empty() && SSL_CTX_load_verify_locations(ctx.get(), c.ssl_ca.c_str(), nullptr) != 1)
    component.fail("ssl.ca", c.ssl_ca + ": " + openssl_reason());
  else if (c.ssl_ca.empty() && c.truststore.empty())
    SSL_CTX_set_default_verify_paths(ctx.get());
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

std::unique_ptr<Sink> make_avro_sink(const config::ComponentConfig& component, Channel& channel,
                                     BuildContext& context) {
  const AvroSinkConfig c = parse_avro_sink_config(component);
  return std::make_unique<AvroSink>(component, c, batch_size_for(component, "batch-size", c.batch_size, channel),
                                    channel, context.sink_group);
}

}  // namespace

const ComponentSpec kAvroSinkSpec{
    .kind = config::Kind::sink,
    .type = "avro",
    .aliases = {"org.apache.flume.sink.AvroSink"},
    .doc =
        "Sends its channel's events to an Avro source (a Flume collector's, or Sluice's) with Flume's Avro RPC: "
        "batch-size events per appendBatch call, the take committed only when the collector answers OK and "
        "rolled back into the channel otherwise.",
    .describe = [] { return config::describe(kAvroSinkProperties); },
    .make_sink = &make_avro_sink,
};

AvroSink::AvroSink(const config::ComponentConfig& component, const AvroSinkConfig& config, size_t batch_size,
                   Channel& channel, SinkGroupMember group)
    : name_(component.name),
      config_(config),
      batch_size_(batch_size),
      channel_(channel),
      group_(std::move(group)),
      client_({.host = config.hostname,
               .port = static_cast<uint16_t>(config.port),
               .connect_timeout = config.connect_timeout,
               .request_timeout = config.request_timeout,
               .deflate_level =
                   config.deflate ? std::optional<int>(static_cast<int>(config.compression_level)) : std::nullopt,
               .tls = client_tls(component, config),
               .stop = &stop_deadline_}) {}

AvroSink::~AvroSink() {
  if (thread_.joinable()) stop(Clock::now());
}

void AvroSink::start() {
  thread_ = std::thread([this] { run(); });
}

void AvroSink::run() {
  size_t failures = 0;  // in a row, for the backoff outside a group
  while (!retiring_.load()) {
    if (draining_.load() && stop_deadline_.passed()) break;
    if (!group_.may_take()) {  // another sink of its group takes now
      if (draining_.load() && channel_.counters().events_held == 0) break;
      std::unique_lock lock(wake_mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(10));  // polls its group, as a take would wait
      continue;
    }
    Take take = channel_.take(batch_size_, Clock::now() + std::chrono::milliseconds(100));
    if (take.empty()) {
      group_.took_nothing();
      // In a group, what another member took may still come back to the channel.
      if (draining_.load() && (!group_ || channel_.counters().events_held == 0)) break;
      continue;
    }
    const bool delivered = send(std::move(take));
    group_.settled(delivered);
    failures = delivered ? 0 : failures + 1;
    if (!delivered && !group_) back_off(failures);
  }
  client_.close();
  connected_.store(false);
}

void AvroSink::encode(const Take& take) {
  encoded_.clear();
  encoded_.reserve(take.bytes * 2 + take.events * 64);
  for (const EventBatch& batch : take.batches)
    for (const EventRecord& e : batch) append_event(batch.all_headers(e), batch.body(e), encoded_);
}

bool AvroSink::send(Take take) {
  taken_.fetch_add(take.events, std::memory_order_relaxed);
  const Clock::time_point taken_at = Clock::now();
  if (config_.reset_connection_interval_s > 0 && client_.connected() &&
      taken_at - client_.connected_at() >= std::chrono::seconds(config_.reset_connection_interval_s))
    client_.close();  // reset-connection-interval: made again for this call
  encode(take);
  const uint64_t connections_before = client_.connections_made();
  const CallResult result = client_.append_batch(encoded_, take.events, Deadline::max());
  connections_.fetch_add(client_.connections_made() - connections_before, std::memory_order_relaxed);
  connected_.store(client_.connected(), std::memory_order_relaxed);
  calls_[static_cast<size_t>(result.outcome)].fetch_add(1, std::memory_order_relaxed);
  batch_seconds_.observe(Clock::now() - taken_at);
  if (result.outcome == CallOutcome::ok) {
    channel_.commit(take);
    latency_.committed(take, taken_at);
    sent_.fetch_add(take.events, std::memory_order_relaxed);
    batches_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // Not held by the collector (or not known to be): back into the channel, to be sent again.
  if (result.outcome == CallOutcome::no_answer) possibly_duplicated_.fetch_add(take.events, std::memory_order_relaxed);
  rolled_back_.fetch_add(take.events, std::memory_order_relaxed);
  if (auto note = failure_log_.next())
    spdlog::warn("sink {}: {} events to {}:{} not delivered ({}): {}; back in channel {} to be sent again{}", name_,
                 take.events, config_.hostname, config_.port, outcome_label(result.outcome), result.why,
                 channel_.name(), *note);
  channel_.rollback(std::move(take));
  return false;
}

void AvroSink::back_off(size_t failures) {
  // A drain pauses too (it ends at its deadline, not at the first failure); the deadline is read
  // again at each wake-up (stop() may set it meanwhile).
  const Deadline pause_end = Clock::now() + std::chrono::seconds(std::min<size_t>(failures, 5));
  std::unique_lock lock(wake_mutex_);
  while (!retiring_.load() && !stop_deadline_.passed()) {
    const Deadline until = std::min(pause_end, stop_deadline_.get());
    if (Clock::now() >= until) break;
    wake_.wait_until(lock, until);
  }
}

void AvroSink::stop(Deadline deadline) {
  if (!thread_.joinable()) return;
  if (!retiring_.load()) {
    stop_deadline_.set(deadline);
    {
      std::lock_guard lock(wake_mutex_);
      draining_.store(true);
    }
    wake_.notify_all();
  }
  thread_.join();
}

// What it holds is the take in hand: its call ends by the deadline (answered, or rolled back).
void AvroSink::retire(Deadline deadline) {
  stop_deadline_.set(deadline);
  {
    std::lock_guard lock(wake_mutex_);
    retiring_.store(true);
  }
  wake_.notify_all();
}

SinkCounters AvroSink::counters() const {
  SinkCounters c;
  c.events_taken = taken_.load(std::memory_order_relaxed);
  c.events_sent = sent_.load(std::memory_order_relaxed);
  c.events_failed = c.events_rolled_back = rolled_back_.load(std::memory_order_relaxed);
  c.events_possibly_duplicated = possibly_duplicated_.load(std::memory_order_relaxed);
  c.batches = batches_.load(std::memory_order_relaxed);
  c.batch_seconds = batch_seconds_.snapshot();
  c.latency = latency_.snapshot();
  return c;
}

void AvroSink::write_metrics(MetricsWriter& w) const {
  for (const CallOutcome outcome : kOutcomes)
    w.counter(metric_names::kSinkAvroCallsTotal, {{"sink", name_}, {"outcome", std::string(outcome_label(outcome))}},
              static_cast<double>(calls_[static_cast<size_t>(outcome)].load(std::memory_order_relaxed)));
  w.counter(metric_names::kSinkAvroConnectionsTotal, {{"sink", name_}},
            static_cast<double>(connections_.load(std::memory_order_relaxed)));
  w.gauge(metric_names::kSinkAvroConnected, {{"sink", name_}}, connected_.load(std::memory_order_relaxed) ? 1 : 0);
}

uint64_t AvroSink::memory_bound(const memory::Context& context) const {
  // A take's events encoded, the request made of them, its frame and (deflate) its compression.
  return memory::add(memory::times(4 * batch_size_, context.max_event_bytes + 64), 1 << 20);
}

}  // namespace sluice::avro
