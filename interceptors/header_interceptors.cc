// The interceptors that set one header: timestamp, host, static and Flume's UUID interceptor.

#include <netdb.h>
#include <unistd.h>

#include <charconv>
#include <random>

#include <spdlog/spdlog.h>

#include "agent/api/interceptor.h"
#include "agent/api/property_table.h"
#include "interceptors/interceptor_specs.h"

namespace sluice::interceptors {
namespace {

// Sets `name` to `value()` unless preserveExisting and the event has it.
template <class Value>
void set_unless_kept(InterceptedEvent& event, const std::string& name, bool preserve_existing, Value&& value) {
  char scratch[24];
  if (preserve_existing && event.header(name, scratch)) return;
  event.set_header(name, value());
}

// What an interceptor that sets `name` to the same value for every event of a read looks at of
// the event: nothing, or with preserveExisting whether it has that header (Interceptor::uniform_but_for).
std::vector<std::string> looks_at(const std::string& name, bool preserve_existing) {
  if (!preserve_existing) return {};
  return {name};
}

// timestamp --------------------------------------------------------------------------------

struct TimestampConfig {
  std::string header_name;
  bool preserve_existing = false;
};

const config::PropertyTable<TimestampConfig> kTimestampProperties{
    {"headerName", &TimestampConfig::header_name, "timestamp", "The header set to the time, in ms since the epoch."},
    {"preserveExisting", &TimestampConfig::preserve_existing, "false",
     "Keep the header if the event has it (a syslog timestamp is the event's timestamp header)."},
};

class TimestampInterceptor final : public Interceptor {
 public:
  explicit TimestampInterceptor(TimestampConfig config) : config_(std::move(config)) {}
  bool intercept(InterceptedEvent& event) const override {
    // The time of the read, formatted once per read (per io thread) rather than per event.
    thread_local int64_t formatted_ms = -1;
    thread_local char digits[24];
    thread_local size_t length = 0;
    if (event.now_ms() != formatted_ms) {
      formatted_ms = event.now_ms();
      length = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, formatted_ms).ptr - digits);
    }
    set_unless_kept(event, config_.header_name, config_.preserve_existing,
                    [&] { return std::string_view(digits, length); });
    return true;
  }
  std::optional<std::vector<std::string>> headers_touched() const override { return {{config_.header_name}}; }
  std::optional<std::vector<std::string>> uniform_but_for() const override {
    return looks_at(config_.header_name, config_.preserve_existing);
  }

 private:
  const TimestampConfig config_;
};

// host -------------------------------------------------------------------------------------

struct HostConfig {
  std::string host_header;
  bool use_ip = true;
  bool preserve_existing = false;
};

const config::PropertyTable<HostConfig> kHostProperties{
    {"hostHeader", &HostConfig::host_header, "host", "The header set to the agent's host."},
    {"useIP", &HostConfig::use_ip, "true",
     "true: the agent's IP address (its host name's first address); false: its canonical host name."},
    {"preserveExisting", &HostConfig::preserve_existing, "false",
     "Keep the header if the event has it (a syslog HOSTNAME is the event's host header)."},
};

// The agent's host, looked up once when the interceptor is made (as Flume does); empty if it
// cannot be (then the header is never set, and that is logged).
std::string local_host(bool use_ip) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_CANONNAME;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0 || !found) return use_ip ? std::string() : std::string(name);
  std::string out;
  if (use_ip) {
    // IPv4 first, as Java's InetAddress prefers it.
    const addrinfo* chosen = found;
    for (const addrinfo* a = found; a; a = a->ai_next)
      if (a->ai_family == AF_INET) {
        chosen = a;
        break;
      }
    char text[NI_MAXHOST] = {};
    if (::getnameinfo(chosen->ai_addr, chosen->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      out = text;
  } else {
    out = found->ai_canonname ? found->ai_canonname : name;
  }
  ::freeaddrinfo(found);
  return out;
}

class HostInterceptor final : public Interceptor {
 public:
  HostInterceptor(HostConfig config, std::string host) : config_(std::move(config)), host_(std::move(host)) {}
  bool intercept(InterceptedEvent& event) const override {
    if (!host_.empty())
      set_unless_kept(event, config_.host_header, config_.preserve_existing, [&] { return std::string_view(host_); });
    return true;
  }
  std::optional<std::vector<std::string>> headers_touched() const override { return {{config_.host_header}}; }
  std::optional<std::vector<std::string>> uniform_but_for() const override {
    return looks_at(config_.host_header, config_.preserve_existing);
  }

 private:
  const HostConfig config_;
  const std::string host_;
};

// static -----------------------------------------------------------------------------------

struct StaticConfig {
  std::string key;
  std::string value;
  bool preserve_existing = true;
};

const config::PropertyTable<StaticConfig> kStaticProperties{
    {"key", &StaticConfig::key, "key", "The header's name."},
    {"value", &StaticConfig::value, "value", "Its value, the same for every event."},
    {"preserveExisting", &StaticConfig::preserve_existing, "true", "Keep the header if the event has it."},
};

class StaticInterceptor final : public Interceptor {
 public:
  explicit StaticInterceptor(StaticConfig config) : config_(std::move(config)) {}
  bool intercept(InterceptedEvent& event) const override {
    set_unless_kept(event, config_.key, config_.preserve_existing, [&] { return std::string_view(config_.value); });
    return true;
  }
  std::optional<std::vector<std::string>> headers_touched() const override { return {{config_.key}}; }
  std::optional<std::vector<std::string>> uniform_but_for() const override {
    return looks_at(config_.key, config_.preserve_existing);
  }

 private:
  const StaticConfig config_;
};

// UUID -------------------------------------------------------------------------------------

struct UuidConfig {
  std::string header_name;
  std::string prefix;
  bool preserve_existing = true;
};

const config::PropertyTable<UuidConfig> kUuidProperties{
    {"headerName", &UuidConfig::header_name, "id", "The header set to a random (version 4) UUID."},
    {"prefix", &UuidConfig::prefix, "", "Text put before the UUID."},
    {"preserveExisting", &UuidConfig::preserve_existing, "true", "Keep the header if the event has it."},
};

// A random version-4 UUID, lowercase, 8-4-4-4-12; each io thread has its own generator.
std::string random_uuid() {
  // Seeded from 256 bits of the system's randomness: two agents (or io threads) sharing a 32-bit
  // seed would make the same UUIDs, and whatever keys on them downstream would merge events.
  thread_local std::mt19937_64 random = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  const uint64_t high = (random() & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  const uint64_t low = (random() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;   // IETF variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 15; i >= 0; --i) {
    out += kHex[(high >> (i * 4)) & 15];
    if (i == 8 || i == 4) out += '-';
  }
  out += '-';
  for (int i = 15; i >= 0; --i) {
    out += kHex[(low >> (i * 4)) & 15];
    if (i == 12) out += '-';
  }
  return out;
}

class UuidInterceptor final : public Interceptor {
 public:
  explicit UuidInterceptor(UuidConfig config) : config_(std::move(config)) {}
  bool intercept(InterceptedEvent& event) const override {
    set_unless_kept(event, config_.header_name, config_.preserve_existing,
                    [&] { return config_.prefix + random_uuid(); });
    return true;
  }
  std::optional<std::vector<std::string>> headers_touched() const override { return {{config_.header_name}}; }

 private:
  const UuidConfig config_;
};

// An interceptor made of its table's bound config.
template <class I, class Config>
std::unique_ptr<Interceptor> bound(const config::PropertyTable<Config>& table, const config::ComponentConfig& c) {
  return std::make_unique<I>(config::bind(table, c));
}

}  // namespace

const ComponentSpec kTimestampInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "timestamp",
    .aliases = {"org.apache.flume.interceptor.TimestampInterceptor$Builder"},
    .doc =
        "Sets a header to the time the event was read (ms since the epoch; one clock read per read, not per "
        "event).",
    .describe = [] { return config::describe(kTimestampProperties); },
    .make_interceptor =
        [](const config::ComponentConfig& c) { return bound<TimestampInterceptor>(kTimestampProperties, c); },
};

const ComponentSpec kHostInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "host",
    .aliases = {"org.apache.flume.interceptor.HostInterceptor$Builder"},
    .doc = "Sets a header to the agent's IP address or host name, looked up once when the interceptor is made.",
    .describe = [] { return config::describe(kHostProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) -> std::unique_ptr<Interceptor> {
      HostConfig config = config::bind(kHostProperties, c);
      std::string host = local_host(config.use_ip);
      if (host.empty())
        spdlog::warn("{}: the agent's host {} could not be looked up: the header {} is not set", c.key_prefix,
                     config.use_ip ? "address" : "name", config.host_header);
      return std::make_unique<HostInterceptor>(std::move(config), std::move(host));
    },
};

const ComponentSpec kStaticInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "static",
    .aliases = {"org.apache.flume.interceptor.StaticInterceptor$Builder"},
    .doc = "Sets one header to a fixed value.",
    .describe = [] { return config::describe(kStaticProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) { return bound<StaticInterceptor>(kStaticProperties, c); },
};

const ComponentSpec kUuidInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "uuid",
    .aliases = {"org.apache.flume.sink.solr.morphline.UUIDInterceptor$Builder"},
    .doc = "Sets a header to a random UUID (Flume's morphline-solr-sink UUIDInterceptor).",
    .describe = [] { return config::describe(kUuidProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) { return bound<UuidInterceptor>(kUuidProperties, c); },
};

}  // namespace sluice::interceptors
