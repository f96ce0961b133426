#include "sinks/kafka/kafka_sink_config.h"

#include "sinks/kafka/jaas_config.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace sluice::kafka {
namespace {

using C = KafkaSinkConfig;

static std::optional<HeaderRef> header_ref(std::string_view name) { return HeaderRef(std::string(name)); }

static std::optional<std::shared_ptr<const interceptors::JavaRegex>> java_regex(std::string_view pattern) {
  if (pattern.empty()) return std::shared_ptr<const interceptors::JavaRegex>();
  try {
    return std::make_shared<const interceptors::JavaRegex>(pattern);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // the table's error names the key and what was expected
  }
}

// kafka.topic's %{header} parts (Flume's substitution); empty if it has none. Throws naming topic.
static TopicTemplate topic_template(const config::ComponentConfig& component, const std::string& topic) {
  TopicTemplate t;
  if (topic.find("%{") == std::string::npos) return t;
  size_t at = 0;
  while (at < topic.size()) {
    const size_t open = topic.find("%{", at);
    if (open == std::string::npos) {
      t.parts.push_back({topic.substr(at), {}});
      break;
    }
    if (open > at) t.parts.push_back({topic.substr(at, open - at), {}});
    const size_t close = topic.find('}', open);
    if (close == std::string::npos || close == open + 2)
      component.fail("topic", "\"" + topic + "\": %{ needs a header name and a closing }");
    const std::string name = topic.substr(open + 2, close - open - 2);
    t.parts.push_back({name, HeaderRef(name)});
    at = close + 1;
  }
  std::string literal;  // what the template writes itself must be a topic's characters
  for (const TopicTemplate::Part& part : t.parts)
    if (part.header.empty()) literal += part.text;
  if (!literal.empty() && !is_valid_topic_name(literal))
    component.fail("topic", "\"" + topic +
                                "\": its text outside %{...} is not made of a topic's characters (a-z A-Z "
                                "0-9 . _ -)");
  return t;
}

// Kafka 0.8 producer names (as the seed's config uses them) → librdkafka's.
struct LegacyName {
  std::string_view kafka08;
  std::string_view librdkafka;
  std::string_view note;  // non-empty: a warning, printed with the line
};
constexpr LegacyName kLegacyNames[] = {
    {"request.required.acks", "acks", ""},
    {"batch.num.messages", "batch.num.messages", ""},
    {"queue.buffering.max.ms", "queue.buffering.max.ms", ""},
    {"queue.buffering.max.messages", "queue.buffering.max.messages", ""},
    {"queue.buffering.max.message", "queue.buffering.max.messages",
     "is not a Kafka property (the name ends in \"messages\"); read as queue.buffering.max.messages"},
    {"send.buffer.bytes", "socket.send.buffer.bytes", ""},
    {"compression.codec", "compression.codec", ""},
    {"message.send.max.retries", "message.send.max.retries", ""},
    {"retry.backoff.ms", "retry.backoff.ms", ""},
    {"request.timeout.ms", "request.timeout.ms", ""},
    {"client.id", "client.id", ""},
};

std::string map_compression(const std::string& value) {
  // Kafka 0.8 also accepted the codec's number.
  if (value == "0") return "none";
  if (value == "1") return "gzip";
  if (value == "2") return "snappy";
  return value;
}

}  // namespace

bool is_valid_topic_name(std::string_view topic) {
  if (topic.empty() || topic.size() > 249 || topic == "." || topic == "..") return false;
  return std::all_of(topic.begin(), topic.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
           ch == '-';
  });
}

// A table, one row per property, laid out for reading rather than by clang-format.
// clang-format off
const config::PropertyTable<C> kKafkaSinkProperties{
    {"topic", &C::topic, "default-flume-topic", "Kafka topic the events go to.", {}, {}, {"kafka.topic"}},
    {"brokerList", &C::bootstrap, "",
     "Kafka bootstrap servers (host:port,...), or \"embedded\" for an in-process mock cluster (tests, demos).",
     {}, {}, {"kafka.bootstrap.servers"}},
    {"key", &C::partition, "-1",
     "Partition for every event (the seed's key=N pins partition N; not a hashed key); -1 lets librdkafka's partitioner choose.",
     {.min = -1, .max = 1'000'000}, {}, {"defaultPartitionId"}},
    {"batchSize", &C::batch_size, "0",
     "Max events per take from the channel, handed to librdkafka as one batch; 0 = the channel's transactionCapacity.",
     {.min = 0, .max = 1'000'000}, {}, {"flumeBatchSize", "kafka.flumeBatchSize"}},
    {"maxTakesInFlight", &C::takes_in_flight, "1",
     "With acks >= 1: takes sent and awaiting their delivery reports at once, settled in the order taken; what "
     "failed goes back to the channel in that order once the window is settled (a later take that was delivered "
     "meanwhile stays delivered, so a retried event can land after newer ones). More than 1 helps with a short "
     "linger.ms (+10% at 5 ms) but splits the channel's room into smaller takes whose last batches then wait out "
     "a long one (-35% with the seed's 500 ms).",
     {.min = 1, .max = 64}},
    {"keyField", config::parsed_as(&C::key_header, "a header name", header_ref), "key",
     "The header whose value is each event's Kafka message key (Flume's: key, which syslog events have only when an "
     "interceptor sets it); any parsed field too: host, app, procid, msgid, structured_data, Facility, Severity, "
     "priority, version, flume.syslog.status, port, timestamp, clientIP, clientHostname. Keyed messages are partitioned by murmur2 of the key, as the Java producer does "
     "(librdkafka's murmur2_random), unless a partition is chosen; an event without it has no key."},
    {"partitionIdHeader", config::parsed_as(&C::partition_header, "a header name", header_ref), "",
     "The header whose value (a number) is each event's partition, e.g. Severity; overrides key. An event without "
     "it, or with a value that is not a partition number, goes where key (defaultPartitionId) or the partitioner "
     "sends it (counted: sluice_sink_partition_header_unusable_total)."},
    {"allowTopicOverride", &C::allow_topic_override, "true",
     "Whether topicHeader may choose each event's topic."},
    {"topicHeader", config::parsed_as(&C::topic_header, "a header name", header_ref), "topic",
     "The header naming each event's topic when allowTopicOverride is on (Flume's: topic, set by an interceptor; or "
     "a parsed field such as app). An event without it goes to topic (with %{header} filled in)."},
    {"allowedTopics", config::parsed_as(&C::allowed_topics, "a Java regular expression", java_regex), "",
     "The topics an event may name (topicHeader, %{header}), as a Java regular expression the whole name must match; "
     "an event naming another goes to topic instead (with a %{header} topic: is discarded), counted "
     "(sluice_sink_event_topics_refused_total{reason=\"not_allowed\"}). Empty: any name. A topic named by an event "
     "that the cluster does not have is never created unless kafka.producer.allow.auto.create.topics = true is set: "
     "its events are discarded, counted as unknown_topic."},
    {"maxTopics", &C::max_topics, "1000",
     "Topics named by events that the sink keeps at once (librdkafka keeps a handle for each; the memory bound "
     "counts 32 KiB a topic, enough for 20 partitions, when events can name topics); the least recently used is let go for a new one, and an event naming one more while every one "
     "is in use goes to topic, counted (sluice_sink_event_topics_refused_total{reason=\"max_topics\"}).",
     {.min = 1, .max = 100'000}},
    {"headers",
     config::list_of(&C::headers, "a header name",
                     [](std::string_view word) -> std::optional<RecordHeaderField> {
                       return RecordHeaderField{HeaderRef(std::string(word)), std::string(word)};
                     }),
     "",
     "Event headers sent as Kafka record headers, each named as written here (e.g. Facility Severity host clientIP, or "
     "one an interceptor sets; numbers in decimal, timestamp in ms since the epoch); a header the event lacks is left "
     "out. Off by default: records with headers are produced one call each (rd_kafka_producev), which costs CPU "
     "(docs/kafka-sink.md).",
     {}, {}, {"kafka.headers"}},
    {"useFlumeEventFormat", &C::flume_event_format, "false",
     "Write each message as Flume's Avro event (AvroFlumeEvent: every header and the body), which Flume's Kafka "
     "source and Kafka channel read with parseAsFlumeEvent = true. format is then the body's."},
    {"shareProducer", &C::share_producer, "false",
     "Share one librdkafka producer with the other sinks whose producer settings are identical: fewer connections and "
     "threads, but one librdkafka broker thread then compresses and sends for all of them (the seed's 10 sinks: 2.6M "
     "events/s shared, 3.7M with one producer each, on 2 cores)."},
    {"stalledPartitionTimeout", &C::stalled_partition_timeout, "30s",
     "A partition librdkafka no longer delivers to while the cluster serves it is stalled: messages of the sink wait "
     "for it and none is delivered for this long while its leader (as the cluster names it) answers for it, or "
     "librdkafka sends it to another leader than the cluster's (or to none) for 5 s (at most this long), or "
     "librdkafka stays connected to no broker (or not to that leader) while the leader answers Sluice's own client "
     "for it since librdkafka lost it (then for this long, and at least reconnect.backoff.max.ms + "
     "socket.connection.setup.timeout.ms, 40 s by default); the producer then gets a second to send the rest, what still waits in it goes back to the channel (acks >= 1; with "
     "acks = 0 it is counted as lost after hand-over, and what it had not taken yet goes back) and a new producer "
     "takes over (counted: sluice_sink_producer_restarts_total). librdkafka can keep a partition from its leader "
     "after an outage (issue 5430; the librdkafka Sluice links carries a fix). A partition the cluster says has no "
     "leader is no stall: its events wait aside. Needs librdkafka's statistics (statistics.interval.ms = 0 turns it "
     "off; so does 0). A stall within 30 min of the last doubles the limit for the next producer (to 10 min).",
     {.min = 0, .max = 86'400'000}},
    {"sslReloadInterval", &C::ssl_reload_interval, "1m",
     "How often the producer's TLS files (kafka.producer.ssl.certificate.location, ssl.key.location, "
     "ssl.ca.location, ssl.keystore.location, ssl.crl.location) are looked at: librdkafka reads them once, so one "
     "that changed (a renewed client certificate) makes a new producer, the way a stalled one is replaced: no new "
     "take until the takes in flight settle (acks >= 1: delivered or back in the channel; acks = 0: the old "
     "producer gets 5 s to send what it holds), then the new one. Files that do not load keep the running "
     "producer, logged and counted (sluice_sink_tls_reloads_total{result}). 0 = read at start only.",
     {.min = 0, .max = 86'400'000}},
    {"deadLetterTopic", &C::dead_letter_topic, "",
     "Where records Kafka refuses for good go instead of being discarded: too large (MESSAGE_TOO_LARGE), invalid "
     "(INVALID_RECORD), a topic an event named that is no topic name or that the cluster does not have. Each goes "
     "as it was (payload, key, kafka.headers) with headers naming why (sluice.dead_letter.reason: too_large, "
     "invalid_message, invalid_topic, unknown_topic, unknown_partition) and where it was meant to go "
     "(sluice.dead_letter.topic); counted (sluice_sink_events_dead_lettered_total{reason}). Its events leave the "
     "channel once the dead-letter topic has them (takes wait for their reports, with acks = 0 too, which then "
     "sees only what librdkafka refuses itself). A dead letter the dead-letter topic refuses for good is discarded "
     "and counted, never sent there again; one it cannot take now goes back to the channel like any other. The "
     "topic must exist (it is not created). A round the dead-letter topic does not answer within 10 s (its partition "
     "without a leader, too few replicas) goes back to the channel and is tried again. Empty: discarded and counted "
     "(sluice_sink_events_discarded_total)."},
    {"deadLetterMaxBytes", &C::dead_letter_max_bytes, "0",
     "With deadLetterTopic: a dead letter's payload is cut to this many bytes (the header "
     "sluice.dead_letter.truncated then holds its length before), so that one too large for its topic fits the "
     "dead-letter topic. 0: what the producer can send (its message.max.bytes, 1,000,000 by default, less 1 KiB "
     "for the key and headers); set it lower when the dead-letter topic's max.message.bytes is lower.",
     {.min = 0, .max = 1LL << 31}},
    {"format", config::one_of(&C::format, {{"body", PayloadFormat::body}, {"raw", PayloadFormat::raw}, {"json", PayloadFormat::json}}),
     "body",
     "What each Kafka message holds: body (the line without PRI, version, timestamp and hostname, or what the source's "
     "keepFields keeps: Flume's default), raw (the line as received, after charset conversion) or json (one object of "
     "every parsed field with Flume's header names, plus the message; copied into librdkafka, so dearer)."},
};
// clang-format on

namespace {

// topic: a Kafka topic name, or a %{header} template when allowTopicOverride lets events name it.
void check_topic(const config::ComponentConfig& component, KafkaSinkConfig& c) {
  c.topic_template = topic_template(component, c.topic);
  if (!c.topic_template.empty() && !c.allow_topic_override)
    component.fail("topic", "\"" + c.topic +
                                "\": %{header} needs allowTopicOverride = true (Flume then takes the "
                                "topic literally, which is not a Kafka topic name)");
  if (c.topic_template.empty() && !is_valid_topic_name(c.topic))
    component.fail("topic",
                   "\"" + c.topic + "\" is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not . or ..)");
  if (!c.allow_topic_override) c.topic_header = HeaderRef();
  if (!c.dead_letter_topic.empty() && !is_valid_topic_name(c.dead_letter_topic))
    component.fail("deadLetterTopic", "\"" + c.dead_letter_topic +
                                          "\" is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not . or ..; "
                                          "no %{header}: one topic for every dead letter)");
  if (!c.dead_letter_topic.empty() && c.topic_template.empty() && c.dead_letter_topic == c.topic)
    component.fail("deadLetterTopic", "is the sink's own topic: what that topic refused it would refuse again");
}

// acks (its Kafka 0.8 aliases, Flume's default of 1), what it implies (idempotence needs all;
// waiting for delivery retries for as long as an outage lasts), and the statistics' interval.
void settle_acks(KafkaSinkConfig& c, bool sync) {
  for (const char* alias : {"request.required.acks", "required.acks"}) {
    if (auto it = c.producer.find(alias); it != c.producer.end()) {
      if (c.producer.count("acks"))
        throw config::ConfigError(it->second.where.to_string() + ": " + it->second.written_as +
                                  ": acks is set twice (also at " + c.producer["acks"].where.to_string() + ")");
      c.producer["acks"] = it->second;
      c.producer.erase(it);
    }
  }
  // Broker state and round-trip times for the metrics endpoint, once a second.
  if (!c.producer.count("statistics.interval.ms"))
    c.producer["statistics.interval.ms"] = ProducerSetting{"1000", {}, "statistics.interval.ms (default)"};
  // Flume's KafkaSink defaults to acks=1; librdkafka's default would be all.
  if (!c.producer.count("acks")) c.producer["acks"] = ProducerSetting{"1", {}, "acks (default)"};
  c.acks = c.producer["acks"].value;
  // librdkafka refuses this only when it creates the producer, at start: --check says it first.
  if (const auto idempotence = c.producer.find("enable.idempotence");
      idempotence != c.producer.end() && idempotence->second.value == "true" && c.acks != "all" && c.acks != "-1")
    throw config::ConfigError(idempotence->second.where.to_string() + ": " + idempotence->second.written_as +
                              ": enable.idempotence = true needs acks = all (acks is " + c.acks + ")");
  // A dead letter leaves the channel only once the dead-letter topic has it: takes wait for their reports.
  c.wait_for_delivery = sync || c.acks != "0" || !c.dead_letter_topic.empty();
  // A message that times out in librdkafka comes back to the sink, which would send it again
  // as a new message: a duplicate if the broker had it, idempotence or not. Waiting for
  // delivery, let librdkafka retry it for as long as the outage lasts (the channel fills and
  // pushes back meanwhile; shutdown purges at its deadline).
  if (c.wait_for_delivery && !c.producer.count("message.timeout.ms") && !c.producer.count("delivery.timeout.ms"))
    c.producer["message.timeout.ms"] = ProducerSetting{"0", {}, "message.timeout.ms (default with acks >= 1)"};
}

}  // namespace

KafkaSinkConfig parse_kafka_sink_config(const config::ComponentConfig& component) {
  bool sync = false;
  ProducerSettings producer;
  auto put = [&](const std::string& name, std::string value, const std::string& key,
                 const config::PropertyValue& given) {
    if (producer.count(name))
      throw config::ConfigError(given.where.to_string() + ": " + component.full_key(key) + ": sets " + name +
                                ", already set at " + producer[name].where.to_string());
    producer[name] = ProducerSetting{std::move(value), given.where, component.full_key(key)};
  };
  auto extra = [&](const std::string& key, const config::PropertyValue& given) {
    if (key == "requiredAcks") {
      put("acks", given.value, key, given);
      return true;
    }
    if (!key.starts_with("kafka.")) return false;
    std::string name = key.substr(6);
    if (name.starts_with("producer.") && name != "producer.type") {
      name = name.substr(9);  // Flume 1.7+: kafka.producer.<Kafka producer property>
    } else if (name == "producer.type") {
      if (given.value != "async" && given.value != "sync")
        throw config::ConfigError(given.where.to_string() + ": " + component.full_key(key) + ": \"" + given.value +
                                  "\" is not one of async sync");
      sync = given.value == "sync";
      return true;
    } else {
      for (const LegacyName& legacy : kLegacyNames) {
        if (name != legacy.kafka08) continue;
        if (!legacy.note.empty())
          spdlog::warn("{}: {}: {} {}", given.where.to_string(), component.full_key(key), legacy.kafka08, legacy.note);
        name = std::string(legacy.librdkafka);
        break;
      }
    }
    if (name == "sasl.jaas.config") {  // Kafka's Java form of the SASL credentials (jaas_config.h)
      try {
        for (const auto& [setting, value] : parse_jaas_config(given.value)) put(setting, value, key, given);
      } catch (const std::invalid_argument& e) {
        throw config::ConfigError(given.where.to_string() + ": " + component.full_key(key) + ": " + e.what());
      }
      return true;
    }
    if (name == "sasl.login.callback.handler.class") {  // Java's; librdkafka's OIDC is built in
      if (!is_oidc_login_handler(given.value))
        throw config::ConfigError(given.where.to_string() + ": " + component.full_key(key) + ": " + given.value +
                                  " has no librdkafka equivalent (OIDC client credentials are: "
                                  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler)");
      return true;
    }
    put(name, name == "compression.codec" ? map_compression(given.value) : given.value, key, given);
    return true;
  };
  C c = config::bind(kKafkaSinkProperties, component, extra);
  c.producer = std::move(producer);
  if (c.bootstrap.empty())
    component.fail("brokerList",
                   "is missing: set brokerList (or kafka.bootstrap.servers) to host:port,... or embedded");
  check_topic(component, c);
  // A topic named by an event is created only when asked for (librdkafka's producer default would
  // let every name an event carries become a topic in a cluster that auto-creates).
  if (const auto create = c.producer.find("allow.auto.create.topics"); create != c.producer.end())
    c.create_event_topics = create->second.value == "true";
  // Keyed messages go where a Java producer would put them, unless the user chose a partitioner.
  if (!c.key_header.empty() && !c.producer.count("partitioner"))
    c.producer["partitioner"] =
        ProducerSetting{"murmur2_random", component.where("keyField"), component.full_key("keyField")};
  settle_acks(c, sync);
  // A dead letter too large for the producer itself could never be sent: by default it is cut to
  // fit (the producer's message.max.bytes, librdkafka's default 1,000,000, less 1 KiB for its key
  // and headers).
  if (!c.dead_letter_topic.empty() && c.dead_letter_max_bytes.bytes == 0) {
    int64_t most = 1'000'000;
    if (const auto it = c.producer.find("message.max.bytes"); it != c.producer.end()) {
      try {
        most = std::stoll(it->second.value);
      } catch (const std::exception&) {}  // librdkafka's validation names a bad value below
    }
    c.dead_letter_max_bytes.bytes = static_cast<uint64_t>(most > 2048 ? most - 1024 : std::max<int64_t>(1, most / 2));
  }
  if (c.producer.count("bootstrap.servers"))
    component.fail("kafka.producer.bootstrap.servers", "set the brokers with brokerList or kafka.bootstrap.servers");
  Producer::validate(c.producer);
  return c;
}

}  // namespace sluice::kafka
