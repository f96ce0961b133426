#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "agent/agent.h"
#include "agent/config/properties_file.h"

using namespace sluice;
using Catch::Contains;

namespace {

const std::string kValid =
    "a.sources = s\n"                           // 1
    "a.channels = c\n"                          // 2
    "a.sinks = k\n"                             // 3
    "a.sources.s.type = multiport_syslogtcp\n"  // 4
    "a.sources.s.ports = 0\n"                   // 5
    "a.sources.s.channels = c\n"                // 6
    "a.channels.c.type = memory\n"              // 7
    "a.sinks.k.type = kafka\n"                  // 8
    "a.sinks.k.channel = c\n"                   // 9
    "a.sinks.k.brokerList = 127.0.0.1:9\n";     // 10

// Builds the agent exactly as `sluice --check` does; returns the error text, "" when valid.
std::string check_config(const std::string& text) {
  try {
    Agent agent(config::assemble(config::parse_properties(text, "f.properties"), "a", "f.properties"));
    return "";
  } catch (const config::ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a valid small configuration passes the check", "[config][errors]") { CHECK(check_config(kValid) == ""); }

TEST_CASE("an unknown component type names the key and the known types", "[config][errors]") {
  const std::string e = check_config(kValid + "a.channels.c.type = file\n");
  // The later line wins the type (and a duplicate key is an error anyway):
  CHECK_THAT(e, Contains("f.properties:11") && Contains("a.channels.c.type is set twice (first at f.properties:7)"));
  const std::string typo = check_config(
      "a.sources = s\na.channels = c\na.sinks = k\na.sources.s.type = syslogtpc\n"
      "a.sources.s.channels = c\na.channels.c.type = memory\na.sinks.k.type = null\n"
      "a.sinks.k.channel = c\n");
  CHECK_THAT(typo, Contains("f.properties:4: a.sources.s.type: \"syslogtpc\" is not a known source type") &&
                       Contains("multiport_syslogtcp"));
}

TEST_CASE("an unknown property names the file and line and key and the known properties", "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.channels.c.capacityy = 10\n"),
             Contains("f.properties:11: a.channels.c.capacityy: unknown property for channel type 'memory'") &&
                 Contains("known: capacity, transactionCapacity"));
}

TEST_CASE("a bad number says what was expected", "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.channels.c.capacity = 10x\n"),
             Contains("f.properties:11: a.channels.c.capacity: \"10x\" is not an integer in [1, 1000000000]"));
  CHECK_THAT(check_config(kValid + "a.channels.c.capacity = 0\n"), Contains("is not an integer in [1,"));
  std::string ports = kValid;
  ports.replace(ports.find("a.sources.s.ports = 0"), 21, "a.sources.s.ports = 0 70000");
  CHECK_THAT(check_config(ports),
             Contains("f.properties:5: a.sources.s.ports: \"70000\" is not an integer in [0, 65535]"));
  CHECK_THAT(check_config(kValid + "a.sources.s.readBufferSize = lots\n"), Contains("is not a size in bytes"));
}

TEST_CASE("a sink without a channel or a reference to an undefined channel is refused", "[config][errors]") {
  std::string no_channel = kValid;
  no_channel.replace(no_channel.find("a.sinks.k.channel = c\n"), 22, "");
  CHECK_THAT(check_config(no_channel), Contains("a.sinks.k.channel is missing"));
  std::string dangling = kValid;
  dangling.replace(dangling.find("a.sinks.k.channel = c"), 21, "a.sinks.k.channel = c9");
  CHECK_THAT(check_config(dangling), Contains("f.properties:9: a.sinks.k.channel: channel 'c9' is not defined"));
  std::string source_dangling = kValid;
  source_dangling.replace(source_dangling.find("a.sources.s.channels = c"), 24, "a.sources.s.channels = c x");
  CHECK_THAT(check_config(source_dangling), Contains("a.sources.s.channels: channel 'x' is not defined"));
}

TEST_CASE("components configured but not listed or listed without a type are refused", "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.sinks.k2.type = null\n"),
             Contains("f.properties:11: a.sinks.k2.type: sink 'k2' is not listed in a.sinks"));
  std::string untyped = kValid;
  untyped.replace(untyped.find("a.sinks = k"), 11, "a.sinks = k k3");
  CHECK_THAT(check_config(untyped), Contains("a.sinks.k3.type is missing"));
}

TEST_CASE("an agent name that is not in the file lists the agents that are", "[config][errors]") {
  try {
    config::assemble(config::parse_properties(kValid, "f.properties"), "tier9", "f.properties");
    FAIL("expected an error");
  } catch (const config::ConfigError& e) {
    CHECK_THAT(e.what(), Contains("no configuration for agent 'tier9'") && Contains("agents in this file: a"));
  }
}

TEST_CASE("batch sizes must fit the channel's transactionCapacity", "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.sources.s.batchSize = 5000\n"),
             Contains("a.sources.s.batchSize: 5000 exceeds the transactionCapacity (1000) of channel 'c'"));
  CHECK_THAT(check_config(kValid + "a.channels.c.transactionCapacity = 20000\n"),
             Contains("a.channels.c.transactionCapacity: 20000 exceeds capacity 10000"));
}

TEST_CASE("a Kafka property librdkafka refuses stops with its message and the line", "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.sinks.k.kafka.producer.no.such.thing = 1\n"),
             Contains("f.properties:11: a.sinks.k.kafka.producer.no.such.thing: librdkafka refused no.such.thing") &&
                 Contains("No such configuration property"));
  CHECK_THAT(check_config(kValid + "a.sinks.k.kafka.compression.codec = zip\n"),
             Contains("librdkafka refused compression.codec"));
  CHECK_THAT(check_config(kValid + "a.sinks.k.kafka.producer.type = turbo\n"),
             Contains("\"turbo\" is not one of async sync"));
}

TEST_CASE("a port in use is refused at start with the key's file and line", "[config][errors]") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  std::string text = kValid;
  text.replace(text.find("a.sources.s.ports = 0"), 21, "a.sources.s.ports = " + port);
  text.replace(text.find("a.sinks.k.type = kafka"), 22, "a.sinks.k.type = null");
  text.replace(text.find("a.sinks.k.brokerList = 127.0.0.1:9\n"), 35, "");
  Agent agent(config::assemble(config::parse_properties(text + "a.sources.s.host = 127.0.0.1\n", "f.properties"), "a",
                               "f.properties"));
  CHECK_THROWS_WITH(agent.start(), Contains("f.properties:5: a.sources.s.ports: cannot listen on 127.0.0.1:" + port) &&
                                       Contains("Address already in use"));
  ::close(fd);
}

TEST_CASE("RELP refuses a selector that routes events to optional channels only", "[config][errors][relp]") {
  const std::string relp_two_channels =
      "a.sources = s\na.channels = c1 c2\na.sinks = k1 k2\n"
      "a.sources.s.type = relp\na.sources.s.ports = 0\na.sources.s.channels = c1 c2\n"
      "a.channels.c1.type = memory\na.channels.c2.type = memory\n"
      "a.sinks.k1.type = kafka\na.sinks.k1.channel = c1\na.sinks.k1.brokerList = 127.0.0.1:9\n"
      "a.sinks.k2.type = kafka\na.sinks.k2.channel = c2\na.sinks.k2.brokerList = 127.0.0.1:9\n";
  CHECK(check_config(relp_two_channels) == "");
  // Replicating with every channel optional: nothing would hold an answered event.
  CHECK_THAT(check_config(relp_two_channels + "a.sources.s.selector.optional = c1 c2\n"),
             Contains("a.sources.s.selector") && Contains("optional channels only (c1, c2)"));
  // One required channel is enough (RELP waits for it; the optional copy may be dropped).
  CHECK(check_config(relp_two_channels + "a.sources.s.selector.optional = c2\n") == "");
  // Multiplexing: a value mapped to an optional channel only.
  const std::string multiplexing = relp_two_channels +
                                   "a.sources.s.selector.type = multiplexing\na.sources.s.selector.header = Severity\n"
                                   "a.sources.s.selector.mapping.3 = c1\n";
  CHECK(check_config(multiplexing) == "");
  CHECK_THAT(check_config(multiplexing + "a.sources.s.selector.optional.4 = c2\n"),
             Contains("optional channels only (c2)"));
  // The TCP source answers nobody: the same selector is fine there.
  std::string tcp = relp_two_channels;
  tcp.replace(tcp.find("= relp"), 6, "= multiport_syslogtcp");
  CHECK(check_config(tcp + "a.sources.s.selector.optional = c1 c2\n") == "");
}

TEST_CASE("RELP answering after Kafka needs every sink of its channels to wait for Kafka's acknowledgement",
          "[config][errors][relp]") {
  std::string relp = kValid;
  relp.replace(relp.find("multiport_syslogtcp"), std::string("multiport_syslogtcp").size(), "relp");
  CHECK(check_config(relp) == "");  // the Kafka sink's default acks = 1
  CHECK_THAT(check_config(relp + "a.sinks.k.kafka.producer.acks = 0\n"),
             Contains("f.properties:4: a.sources.s.ackAfter: answers senders once events are delivered, but sink 'k' "
                      "on channel 'c' commits without Kafka's acknowledgement"));
  // The same source beside a null sink, and with a channel no sink drains.
  const std::string head = relp.substr(0, relp.find("a.channels.c.type"));
  CHECK_THAT(check_config(head + "a.channels.c.type = memory\na.sinks.k.type = null\na.sinks.k.channel = c\n"),
             Contains("sink 'k' on channel 'c' commits without Kafka's acknowledgement"));
  std::string two = relp;
  two.replace(two.find("a.channels = c\n"), std::string("a.channels = c\n").size(), "a.channels = c d\n");
  two.replace(two.find("a.sources.s.channels = c\n"), std::string("a.sources.s.channels = c\n").size(),
              "a.sources.s.channels = c d\n");
  CHECK_THAT(check_config(two + "a.channels.d.type = memory\n"), Contains("ackAfter: needs a sink on channel 'd'"));
}

TEST_CASE("proxyProtocol needs proxyTrustedFrom, the balancers whose headers are believed, and not the other way",
          "[config][errors]") {
  CHECK_THAT(check_config(kValid + "a.sources.s.proxyProtocol = v2\n"),
             Contains("f.properties:11: a.sources.s.proxyProtocol: needs proxyTrustedFrom") &&
                 Contains("could claim any client address") && Contains("0.0.0.0/0 ::/0"));
  CHECK_THAT(check_config(kValid + "a.sources.s.proxyTrustedFrom = 10.0.0.5\n"),
             Contains("a.sources.s.proxyTrustedFrom: is set but proxyProtocol is none"));
  CHECK_THAT(check_config(kValid + "a.sources.s.proxyProtocol = v2\na.sources.s.proxyTrustedFrom = balancer\n"),
             Contains("a.sources.s.proxyTrustedFrom: \"balancer\" is not a network"));
  CHECK(check_config(kValid +
                     "a.sources.s.proxyProtocol = v2\na.sources.s.proxyTrustedFrom = 10.0.0.5 10.0.1.0/24\n") == "");
}

TEST_CASE("sink groups as Flume's user guide writes them load, and what cannot work is refused naming the key",
          "[config][errors][sinkgroups]") {
  std::string text = kValid;  // with a second sink, k2
  text.replace(text.find("a.sinks = k\n"), 12, "a.sinks = k k2\n");
  text += "a.sinks.k2.type = kafka\na.sinks.k2.channel = c\na.sinks.k2.brokerList = 127.0.0.1:9\n";
  CHECK(check_config(text +
                     "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k k2\na.sinkgroups.g1.processor.type = failover\n"
                     "a.sinkgroups.g1.processor.priority.k = 5\na.sinkgroups.g1.processor.priority.k2 = 10\n"
                     "a.sinkgroups.g1.processor.maxpenalty = 10000\n") == "");
  CHECK(check_config(text +
                     "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k k2\na.sinkgroups.g1.processor.type = load_balance\n"
                     "a.sinkgroups.g1.processor.backoff = true\na.sinkgroups.g1.processor.selector = random\n") == "");
  CHECK(check_config(text + "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k\n") == "");  // default: one sink
  CHECK_THAT(check_config(text + "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k nope\n"),
             Contains("a.sinkgroups.g1.sinks: sink 'nope' is not defined"));
  CHECK_THAT(check_config(text + "a.sinkgroups = g1 g2\na.sinkgroups.g1.sinks = k\na.sinkgroups.g2.sinks = k\n"),
             Contains("a.sinkgroups.g2.sinks: sink 'k' is in sink group 'g1' already"));
  CHECK_THAT(check_config(text + "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k k2\n"),
             Contains("a.sinkgroups.g1.processor.type") && Contains("choose failover or load_balance"));
  CHECK_THAT(
      check_config(text + "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k\na.sinkgroups.g1.procesor.type = failover\n"),
      Contains("a.sinkgroups.g1.procesor.type: unknown key"));
  CHECK_THAT(check_config(text + "a.sinkgroups.g9.sinks = k\n"), Contains("sink group 'g9' is not listed"));
  CHECK_THAT(check_config(text + "a.sinkgroups = g1\n"), Contains("a.sinkgroups.g1.sinks is missing"));
  CHECK_THAT(check_config(text + "a.sinkgroups = g1\na.sinkgroups.g1.sinks = k k2\na.sinkgroups.g1.processor.type = "
                                 "com.example.MyProcessor\n"),
             Contains("is not a known sink group type"));
}
