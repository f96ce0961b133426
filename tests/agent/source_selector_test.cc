// A source's channel selector (source_selector.cc and the selectors/ specs) as Flume's file
// configures it: the routes each one makes, the route each event takes (after the interceptors),
// and what --check refuses.

#include <catch2/catch.hpp>

#include "agent/source_interceptors.h"
#include "agent/source_selector.h"
#include "sources/syslog/event_decoder.h"
#include "tests/support/component.h"

using namespace sluice;
using Catch::Contains;

namespace {

config::ComponentConfig source_with(std::map<std::string, std::string> properties) {
  config::ComponentConfig source = test::component(config::Kind::source, "r", "syslogtcp", properties);
  source.channels = {"c1", "c2", "c3"};
  return source;
}

std::shared_ptr<const ChannelSelector> selector_of(std::map<std::string, std::string> properties) {
  config::ComponentConfig source = source_with(std::move(properties));
  auto selector = take_selector(source);
  CHECK(source.properties.empty());  // the source's table sees none of them
  return selector;
}

std::string selector_refusal(std::map<std::string, std::string> properties) {
  config::ComponentConfig source = source_with(std::move(properties));
  try {
    take_selector(source);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

// The route of each line, decoded as a TCP source would and put through the source's
// interceptors first (as the source does).
std::vector<int> routes_of(std::map<std::string, std::string> properties, const std::vector<std::string>& lines) {
  config::ComponentConfig source = source_with(std::move(properties));
  const auto chain = take_interceptors(source);
  const auto selector = take_selector(source);
  EventBatchBuilder builder;
  syslog::EventDecoder decoder(0);
  const syslog::ParseClock clock = syslog::ParseClock::at(1'700'000'000'000);
  std::vector<int> routes;
  for (const std::string& line : lines) {
    uint64_t invalid_utf8 = 0;
    decoder.decode(line, {}, syslog::Charset::utf8, clock, builder, invalid_utf8);
    if (chain) REQUIRE(chain->apply(builder, clock.now_ms));
    routes.push_back(selector->route(builder));
  }
  return routes;
}

using Channels = std::vector<size_t>;

}  // namespace

TEST_CASE("without a selector every channel is required, replicating's optional ones are not", "[selectors]") {
  const auto plain = selector_of({});
  REQUIRE(plain->single_route());
  CHECK(plain->routes()[0].required == Channels{0, 1, 2});
  CHECK(plain->routes()[0].optional.empty());

  const auto optional = selector_of({{"selector.type", "Replicating"}, {"selector.optional", "c3 c1"}});
  REQUIRE(optional->single_route());
  CHECK(optional->routes()[0].required == Channels{1});
  CHECK(optional->routes()[0].optional == Channels{2, 0});
  // Flume's default type: selector.optional alone is replicating's.
  CHECK(selector_of({{"selector.optional", "c2"}})->routes()[0].optional == Channels{1});
  CHECK(selector_of({{"selector.type", "org.apache.flume.channel.ReplicatingChannelSelector"}})->single_route());
}

TEST_CASE("multiplexing: a route per mapped value, the default for the rest, optional ones less the required",
          "[selectors]") {
  const auto selector = selector_of({{"selector.type", "multiplexing"},
                                     {"selector.header", "Severity"},
                                     {"selector.mapping.3", "c1"},
                                     {"selector.mapping.6", "c2 c3"},
                                     {"selector.optional.3", "c3 c1"},  // c1 is required for 3 already
                                     {"selector.optional.7", "c3"},     // 7 maps nowhere: the default is required
                                     {"selector.default", "c2"}});
  const std::vector<ChannelRoute>& routes = selector->routes();
  REQUIRE(routes.size() == 4);  // the default, then 3, 6, 7 (sorted)
  CHECK(routes[0].required == Channels{1});
  CHECK(routes[0].optional.empty());
  CHECK(routes[1].required == Channels{0});
  CHECK(routes[1].optional == Channels{2});
  CHECK(routes[2].required == Channels{1, 2});
  CHECK(routes[3].required == Channels{1});
  CHECK(routes[3].optional == Channels{2});

  // Severity as the syslog source parses it: <11> is 3, <14> is 6, <15> is 7, <13> is 5 (unmapped).
  CHECK(routes_of({{"selector.type", "multiplexing"},
                   {"selector.header", "Severity"},
                   {"selector.mapping.3", "c1"},
                   {"selector.mapping.6", "c2 c3"},
                   {"selector.optional.7", "c3"},
                   {"selector.default", "c2"}},
                  {"<11>a: x", "<14>a: x", "<15>a: x", "<13>a: x", "no header at all"}) ==
        std::vector<int>{1, 2, 3, 0, 0});
}

TEST_CASE("multiplexing reads the headers interceptors set, removed or blank ones take the default", "[selectors]") {
  const std::map<std::string, std::string> base{{"selector.type", "MULTIPLEXING"},
                                                {"selector.header", "dc"},
                                                {"selector.mapping.ams", "c1"},
                                                {"selector.mapping.fra", "c2"},
                                                {"selector.default", "c3"}};
  auto with = [&](std::map<std::string, std::string> more) {
    more.insert(base.begin(), base.end());
    return more;
  };
  CHECK(routes_of(with({{"interceptors", "s"},
                        {"interceptors.s.type", "static"},
                        {"interceptors.s.key", "dc"},
                        {"interceptors.s.value", "fra"}}),
                  {"<13>a: x"}) == std::vector<int>{2});
  // Values match exactly (Flume's HashMap): "AMS" is not "ams".
  CHECK(routes_of(with({{"interceptors", "s"},
                        {"interceptors.s.type", "static"},
                        {"interceptors.s.key", "dc"},
                        {"interceptors.s.value", "AMS"}}),
                  {"<13>a: x"}) == std::vector<int>{0});
  CHECK(routes_of(with({{"interceptors", "s"},
                        {"interceptors.s.type", "static"},
                        {"interceptors.s.key", "dc"},
                        {"interceptors.s.value", "  "}}),
                  {"<13>a: x"}) == std::vector<int>{0});
  // The header from the body (regex_extractor), then taken away again (remove_header).
  CHECK(routes_of(with({{"interceptors", "x"},
                        {"interceptors.x.type", "regex_extractor"},
                        {"interceptors.x.regex", "dc=(\\w+)"},
                        {"interceptors.x.serializers", "s"},
                        {"interceptors.x.serializers.s.name", "dc"}}),
                  {"<13>a: dc=ams", "<13>a: dc=fra", "<13>a: none"}) == std::vector<int>{1, 2, 0});
  CHECK(routes_of(with({{"interceptors", "s r"},
                        {"interceptors.s.type", "static"},
                        {"interceptors.s.key", "dc"},
                        {"interceptors.s.value", "ams"},
                        {"interceptors.r.type", "remove_header"},
                        {"interceptors.r.withName", "dc"}}),
                  {"<13>a: x"}) == std::vector<int>{0});
  // Severity set by an interceptor is the one that counts, not the parsed one; removed, the default.
  const std::map<std::string, std::string> by_severity{{"selector.type", "multiplexing"},
                                                       {"selector.header", "Severity"},
                                                       {"selector.mapping.3", "c1"},
                                                       {"selector.default", "c3"}};
  auto severity_with = [&](std::map<std::string, std::string> more) {
    more.insert(by_severity.begin(), by_severity.end());
    return more;
  };
  CHECK(routes_of(severity_with({{"interceptors", "s"},
                                 {"interceptors.s.type", "static"},
                                 {"interceptors.s.key", "Severity"},
                                 {"interceptors.s.value", "3"},
                                 {"interceptors.s.preserveExisting", "false"}}),
                  {"<14>a: x", "<11>a: x"}) == std::vector<int>{1, 1});
  CHECK(routes_of(severity_with({{"interceptors", "r"},
                                 {"interceptors.r.type", "remove_header"},
                                 {"interceptors.r.matching", "Sev.*"}}),
                  {"<11>a: x"}) == std::vector<int>{0});
  CHECK(routes_of(severity_with({{"interceptors", "r"},
                                 {"interceptors.r.type", "remove_header"},
                                 {"interceptors.r.withName", "Severity"}}),
                  {"<11>a: x"}) == std::vector<int>{0});
  CHECK(routes_of(severity_with({{"interceptors", "d"},
                                 {"interceptors.d.type", "static"},
                                 {"interceptors.d.key", "dc"},
                                 {"interceptors.d.value", "ams"}}),
                  {"<11>a: x", "<14>a: x"}) == std::vector<int>{1, 0});
  // The default header name is Flume's.
  CHECK(routes_of({{"selector.type", "multiplexing"},
                   {"selector.mapping.x", "c1"},
                   {"interceptors", "s"},
                   {"interceptors.s.type", "static"},
                   {"interceptors.s.key", "flume.selector.header"},
                   {"interceptors.s.value", "x"}},
                  {"<13>a: x"}) == std::vector<int>{1});
}

TEST_CASE("a multiplexing selector without a default routes unmapped events to no channel", "[selectors]") {
  const auto selector = selector_of({{"selector.type", "multiplexing"}, {"selector.mapping.3", "c1"}});
  REQUIRE(selector->routes().size() == 2);
  CHECK(selector->routes()[0].required.empty());
  CHECK(selector->routes()[0].optional.empty());
}

TEST_CASE("load_balancing: one required channel per event, in turn or at random", "[selectors]") {
  const auto turns = selector_of({{"selector.type", "load_balancing"}});
  REQUIRE(turns->routes().size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(turns->routes()[i].required == Channels{i});
  const std::vector<int> routes = routes_of({{"selector.type", "load_balancing"}}, std::vector<std::string>(6, "x"));
  for (size_t i = 1; i < routes.size(); ++i) CHECK(routes[i] == (routes[i - 1] + 1) % 3);
  const std::vector<int> random = routes_of({{"selector.type", "load_balancing"}, {"selector.policy", "RANDOM"}},
                                            std::vector<std::string>(300, "x"));
  for (int channel = 0; channel < 3; ++channel) CHECK(std::count(random.begin(), random.end(), channel) > 30);
}

TEST_CASE("a selector's impossible settings are refused at --check, naming the key", "[selectors]") {
  CHECK_THAT(selector_refusal({{"selector.type", "com.example.MySelector"}}),
             Contains("a.sources.r.selector.type") && Contains("custom selector classes are not supported"));
  CHECK_THAT(selector_refusal({{"selector.optional", "c9"}}),
             Contains("a.sources.r.selector.optional") && Contains("channel 'c9' is not one of the source's channels"));
  CHECK_THAT(selector_refusal({{"selector.type", "multiplexing"}, {"selector.mapping.3", ""}}),
             Contains("a.sources.r.selector.mapping.3") && Contains("lists no channel"));
  CHECK_THAT(selector_refusal({{"selector.type", "multiplexing"}, {"selector.default", "c1 nope"}}),
             Contains("a.sources.r.selector.default") && Contains("'nope'"));
  CHECK_THAT(selector_refusal({{"selector.type", "multiplexing"}, {"selector.headr", "Severity"}}),
             Contains("a.sources.r.selector.headr"));
  CHECK_THAT(selector_refusal({{"selector.type", "load_balancing"}, {"selector.policy", "least_busy"}}),
             Contains("a.sources.r.selector.policy") && Contains("round_robin or random"));
  std::map<std::string, std::string> many{{"selector.type", "multiplexing"}};
  for (int i = 0; i < 256; ++i) many["selector.mapping.v" + std::to_string(i)] = "c1";
  CHECK_THAT(selector_refusal(many), Contains("at most 255"));
}

TEST_CASE("selector.header reads a parsed field by the names a sink does: app, severity, any case", "[selectors]") {
  const std::vector<std::string> lines{"<11>Nov 30 11:07:06 h web: x", "<14>Nov 30 11:07:06 h db: x"};
  // app (no Flume header of that name; a sink's topicHeader = app reads the syslog tag): web and db
  // (routes sorted by value: db is 1, web 2).
  CHECK(routes_of({{"selector.type", "multiplexing"},
                   {"selector.header", "app"},
                   {"selector.mapping.web", "c1"},
                   {"selector.mapping.db", "c2"}},
                  lines) == std::vector<int>{2, 1});
  // severity and SEVERITY as Severity (3 and 6).
  for (const char* name : {"severity", "SEVERITY", "Severity"}) {
    INFO(name);
    CHECK(routes_of({{"selector.type", "multiplexing"},
                     {"selector.header", name},
                     {"selector.mapping.3", "c1"},
                     {"selector.mapping.6", "c2"}},
                    lines) == std::vector<int>{1, 2});
  }
}
