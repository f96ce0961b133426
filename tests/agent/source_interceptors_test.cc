// A source's interceptors (source_interceptors.cc and the interceptors/ specs) on Sluice's events,
// each against Flume's documented behaviour: what they set, keep, remove, rewrite and filter, in
// chain order, and what --check refuses.

#include <catch2/catch.hpp>

#include <regex>

#include "agent/source_interceptors.h"
#include "sources/syslog/event_decoder.h"
#include "tests/support/component.h"

using namespace sluice;
using Catch::Contains;

namespace {

struct Made {
  EventBatch batch;
  size_t filtered = 0;
  std::string header(size_t i, const std::string& name) const {
    char scratch[24];
    return std::string(batch.header(batch[i], name, scratch).value_or("<none>"));
  }
  std::string body(size_t i) const { return std::string(batch.body(batch[i])); }
};

// Lines decoded as a TCP source would, each put through the interceptors of `properties` (a
// source's, e.g. {"interceptors", "i1"}, {"interceptors.i1.type", "static"}), at `now_ms`.
Made intercept(std::map<std::string, std::string> properties, const std::vector<std::string>& lines,
               int64_t now_ms = 1'700'000'000'000) {
  config::ComponentConfig source = test::component(config::Kind::source, "r", "syslogtcp", properties);
  const std::shared_ptr<const InterceptorChain> chain = take_interceptors(source);
  CHECK(source.properties.empty());  // the source's table sees none of them
  EventBatchBuilder builder;
  syslog::EventDecoder decoder(0);
  const syslog::ParseClock clock = syslog::ParseClock::at(now_ms);
  Made made;
  for (const std::string& line : lines) {
    uint64_t invalid_utf8 = 0;
    decoder.decode(line, {}, syslog::Charset::utf8, clock, builder, invalid_utf8);
    if (chain && !chain->apply(builder, now_ms)) ++made.filtered;
  }
  made.batch = builder.seal();
  return made;
}

std::string interceptors_refusal(std::map<std::string, std::string> properties) {
  config::ComponentConfig source = test::component(config::Kind::source, "r", "syslogtcp", properties);
  try {
    take_interceptors(source);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kLine = "<13>Dec  4 05:00:00 web01 app[42]: GET /index.html 200 took 12ms";

}  // namespace

TEST_CASE("timestamp, host and static set their header, keeping an existing one only when told to", "[interceptors]") {
  const Made made = intercept({{"interceptors", "t h s1 s2"},
                               {"interceptors.t.type", "TIMESTAMP"},
                               {"interceptors.h.type", "org.apache.flume.interceptor.HostInterceptor$Builder"},
                               {"interceptors.h.hostHeader", "agent"},
                               {"interceptors.s1.type", "static"},
                               {"interceptors.s1.key", "dc"},
                               {"interceptors.s1.value", "ams"},
                               {"interceptors.s2.type", "static"},
                               {"interceptors.s2.key", "host"},  // the event has one: kept by default
                               {"interceptors.s2.value", "other"}},
                              {kLine});
  CHECK(made.header(0, "timestamp") == "1700000000000");
  CHECK(made.header(0, "dc") == "ams");
  CHECK(made.header(0, "host") == "web01");
  CHECK(made.header(0, "agent") != "<none>");
  CHECK(made.header(0, "Severity") == "5");  // the parsed fields stay headers

  const Made kept = intercept({{"interceptors", "t s"},
                               {"interceptors.t.type", "timestamp"},
                               {"interceptors.t.preserveExisting", "true"},
                               {"interceptors.s.type", "static"},
                               {"interceptors.s.key", "host"},
                               {"interceptors.s.value", "other"},
                               {"interceptors.s.preserveExisting", "false"}},
                              {kLine});
  CHECK(kept.header(0, "host") == "other");
  CHECK(kept.header(0, "timestamp") != "1700000000000");  // the syslog header's time stays
}

TEST_CASE("a chain that sets the same headers on every event makes their block once per read", "[interceptors]") {
  const auto chain_of = [](std::map<std::string, std::string> properties) {
    config::ComponentConfig source = test::component(config::Kind::source, "r", "syslogtcp", properties);
    return take_interceptors(source);
  };
  // Timestamp and a static header kept if present: the same for every event of a read.
  const auto uniform = chain_of({{"interceptors", "t s"},
                                 {"interceptors.t.type", "timestamp"},
                                 {"interceptors.s.type", "static"},
                                 {"interceptors.s.key", "dc"},
                                 {"interceptors.s.value", "ams"}});
  const auto other = chain_of({{"interceptors", "s"},
                               {"interceptors.s.type", "static"},
                               {"interceptors.s.key", "dc"},
                               {"interceptors.s.value", "fra"}});
  // A static header the event may have (host): looked for per event.
  const auto per_event = chain_of({{"interceptors", "s"},
                                   {"interceptors.s.type", "static"},
                                   {"interceptors.s.key", "host"},
                                   {"interceptors.s.value", "other"}});
  EventBatchBuilder builder;
  syslog::EventDecoder decoder(0);
  const auto add = [&](const std::string& line, const InterceptorChain& chain, int64_t now_ms) {
    uint64_t invalid_utf8 = 0;
    decoder.decode(line, {}, syslog::Charset::utf8, syslog::ParseClock::at(now_ms), builder, invalid_utf8);
    CHECK(chain.apply(builder, now_ms));
  };
  add(kLine, *uniform, 1000);
  add(kLine, *other, 1000);  // another chain between two events of the same read
  add(kLine, *uniform, 1000);
  add(kLine, *uniform, 2000);  // the next read
  add(kLine, *per_event, 2000);
  add("<13>no host here", *per_event, 2000);
  add(kLine, *uniform, 2000);
  const EventBatch batch = builder.seal();
  char scratch[24];
  const auto header = [&](size_t i, std::string_view name) {
    return std::string(batch.header(batch[i], name, scratch).value_or("<none>"));
  };
  CHECK(header(0, "dc") == "ams");
  CHECK(header(1, "dc") == "fra");
  CHECK(header(2, "dc") == "ams");
  CHECK(header(0, "timestamp") == "1000");
  CHECK(header(2, "timestamp") == "1000");
  CHECK(header(3, "timestamp") == "2000");
  CHECK(header(4, "host") == "web01");
  CHECK(header(5, "host") == "other");
  CHECK(header(6, "timestamp") == "2000");
  CHECK(header(6, "dc") == "ams");

  // A static header kept if present whose name is the source's clientIP header: per event.
  EventBatchBuilder named;
  named.set_header_names(std::make_shared<HeaderNames>(HeaderNames{"", "dc", ""}));
  const auto kept = chain_of({{"interceptors", "s"},
                              {"interceptors.s.type", "static"},
                              {"interceptors.s.key", "dc"},
                              {"interceptors.s.value", "ams"}});
  for (const bool with_client : {false, true}) {
    uint64_t invalid_utf8 = 0;
    decoder.decode(kLine, {}, syslog::Charset::utf8, syslog::ParseClock::at(1000), named, invalid_utf8);
    if (with_client) {
      named.last().client_offset = named.append_to_last("10.1.2.3");
      named.last().client_ip_length = 8;
    }
    CHECK(kept->apply(named, 1000));
  }
  const EventBatch with_names = named.seal();
  CHECK(std::string(with_names.header(with_names[0], "dc", scratch).value_or("<none>")) == "ams");
  CHECK(std::string(with_names.header(with_names[1], "dc", scratch).value_or("<none>")) == "10.1.2.3");
}

TEST_CASE("the UUID interceptor gives every event its own version-4 UUID", "[interceptors]") {
  const Made made = intercept({{"interceptors", "u"},
                               {"interceptors.u.type", "org.apache.flume.sink.solr.morphline.UUIDInterceptor$Builder"},
                               {"interceptors.u.prefix", "ev-"}},
                              {kLine, kLine});
  const std::regex shape("ev-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  CHECK(std::regex_match(made.header(0, "id"), shape));
  CHECK(std::regex_match(made.header(1, "id"), shape));
  CHECK(made.header(0, "id") != made.header(1, "id"));
}

TEST_CASE("remove_header removes by name, list and whole-name match, parsed fields included", "[interceptors]") {
  const Made made = intercept({{"interceptors", "s1 s2 s3 r"},
                               {"interceptors.s1.type", "static"},
                               {"interceptors.s1.key", "keep"},
                               {"interceptors.s2.type", "static"},
                               {"interceptors.s2.key", "tmp_a"},
                               {"interceptors.s3.type", "static"},
                               {"interceptors.s3.key", "x_tmp"},
                               {"interceptors.r.type", "remove_header"},
                               {"interceptors.r.withName", "host"},
                               {"interceptors.r.fromList", "Facility , nothere"},
                               {"interceptors.r.matching", "tmp_.*"}},
                              {kLine});
  CHECK(made.header(0, "host") == "<none>");
  CHECK(made.header(0, "Facility") == "<none>");
  CHECK(made.header(0, "tmp_a") == "<none>");
  CHECK(made.header(0, "x_tmp") == "value");  // matches() takes the whole name
  CHECK(made.header(0, "keep") == "value");
  CHECK(made.header(0, "Severity") == "5");
}

TEST_CASE("regex_filter keeps or drops by find() in the body, and search_replace rewrites the body", "[interceptors]") {
  const std::vector<std::string> lines = {kLine, "<13>Dec  4 05:00:00 web01 app: POST /login 500",
                                          "<13>Dec  4 05:00:00 web01 app: password=hunter2 rejected"};
  const Made only_get = intercept(
      {{"interceptors", "f"}, {"interceptors.f.type", "regex_filter"}, {"interceptors.f.regex", ": GET "}}, lines);
  CHECK(only_get.batch.size() == 1);
  CHECK(only_get.filtered == 2);
  const Made no_500 = intercept({{"interceptors", "f"},
                                 {"interceptors.f.type", "regex_filter"},
                                 {"interceptors.f.regex", " 5\\d\\d$"},
                                 {"interceptors.f.excludeEvents", "true"}},
                                lines);
  CHECK(no_500.batch.size() == 2);
  CHECK(no_500.filtered == 1);
  const Made masked = intercept({{"interceptors", "m"},
                                 {"interceptors.m.type", "search_replace"},
                                 {"interceptors.m.searchPattern", "password=(\\S+)"},
                                 {"interceptors.m.replaceString", "password=***"}},
                                lines);
  // The body is Flume's: the line without the header fields keepFields drops (the TAG stays).
  CHECK(masked.body(2) == "app: password=*** rejected");
  CHECK(masked.body(0) == "app[42]: GET /index.html 200 took 12ms");
  CHECK(std::string(masked.batch.raw(masked.batch[2])) == lines[2]);  // the frame as received stays
}

TEST_CASE("a match the regex cannot decide on a hostile line keeps the event as it is", "[interceptors]") {
  const std::string hostile = "<13>app: " + std::string(40, 'a') + "b";
  const Made kept = intercept(
      {{"interceptors", "f"}, {"interceptors.f.type", "regex_filter"}, {"interceptors.f.regex", "(a+)+$"}}, {hostile});
  CHECK(kept.batch.size() == 1);
  CHECK(kept.filtered == 0);
  const Made unchanged = intercept(
      {{"interceptors", "r"}, {"interceptors.r.type", "search_replace"}, {"interceptors.r.searchPattern", "(a+)+$"}},
      {hostile});
  CHECK(unchanged.body(0) == "app: " + std::string(40, 'a') + "b");
}

TEST_CASE("interceptors see Flume's header names only: app is no header, flume.syslog.status is one",
          "[interceptors]") {
  const Made made = intercept({{"interceptors", "s r"},
                               {"interceptors.s.type", "static"},
                               {"interceptors.s.key", "app"},  // Flume's syslog events have no app header
                               {"interceptors.s.value", "set"},
                               {"interceptors.r.type", "remove_header"},
                               {"interceptors.r.withName", "flume.syslog.status"}},
                              {kLine, "no PRI at all"});
  CHECK(made.header(0, "app") == "set");
  std::vector<std::string> names;
  for (const auto& [name, value] : made.batch.all_headers(made.batch[1])) names.push_back(name);
  CHECK(names == std::vector<std::string>{"timestamp", "Facility", "Severity", "app"});  // the status removed
}

TEST_CASE("regex_extractor puts the first match's groups into headers, times in ms", "[interceptors]") {
  const Made made = intercept({{"interceptors", "x"},
                               {"interceptors.x.type", "regex_extractor"},
                               {"interceptors.x.regex", "(GET|POST) (\\S+) (\\d{3})(?: took (\\d+)ms)?"},
                               {"interceptors.x.serializers", "m p s d"},
                               {"interceptors.x.serializers.m.name", "method"},
                               {"interceptors.x.serializers.p.name", "path"},
                               {"interceptors.x.serializers.s.name", "status"},
                               {"interceptors.x.serializers.s.type", "DEFAULT"},
                               {"interceptors.x.serializers.d.name", "took"}},
                              {kLine, "<13>Dec  4 05:00:00 web01 app: POST /login 500", "<13>no match here"});
  CHECK(made.header(0, "method") == "GET");
  CHECK(made.header(0, "path") == "/index.html");
  CHECK(made.header(0, "status") == "200");
  CHECK(made.header(0, "took") == "12");
  CHECK(made.header(1, "took") == "<none>");  // its group did not take part
  CHECK(made.header(2, "method") == "<none>");
  CHECK(made.batch.size() == 3);  // no match: the event is kept unchanged

  const Made timed = intercept(
      {{"interceptors", "x"},
       {"interceptors.x.type", "regex_extractor"},
       {"interceptors.x.regex", "at (\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\dZ)"},
       {"interceptors.x.serializers", "t"},
       {"interceptors.x.serializers.t.name", "when"},
       {"interceptors.x.serializers.t.type", "org.apache.flume.interceptor.RegexExtractorInterceptorMillisSerializer"},
       {"interceptors.x.serializers.t.pattern", "yyyy-MM-dd HH:mmZ"}},
      {"<13>app: done at 2012-10-19 01:47Z", "<13>app: done at 2012-13-19 01:47Z"});
  CHECK(timed.header(0, "when") == "1350611220000");
  CHECK(timed.header(1, "when") == "<none>");  // not a time: no header, the event kept
}

TEST_CASE("what an interceptor cannot be is refused at --check naming the key", "[interceptors]") {
  CHECK_THAT(interceptors_refusal({{"interceptors", "i"}}), Contains("r.interceptors.i.type: is missing"));
  CHECK_THAT(
      interceptors_refusal({{"interceptors", "i"}, {"interceptors.i.type", "com.example.MyInterceptor$Builder"}}),
      Contains("custom interceptor classes are not supported"));
  CHECK_THAT(interceptors_refusal(
                 {{"interceptors", "i"},
                  {"interceptors.i.type", "org.apache.flume.sink.solr.morphline.MorphlineInterceptor$Builder"}}),
             Contains("morphline"));
  CHECK_THAT(interceptors_refusal(
                 {{"interceptors", "i"}, {"interceptors.j.type", "static"}, {"interceptors.i.type", "static"}}),
             Contains("r.interceptors.j.type: configures an interceptor not listed"));
  CHECK_THAT(interceptors_refusal(
                 {{"interceptors", "i"}, {"interceptors.i.type", "regex_filter"}, {"interceptors.i.regex", "(x"}}),
             Contains("r.interceptors.i.regex: \"(x\" is not a regular expression"));
  CHECK_THAT(interceptors_refusal({{"interceptors", "i"}, {"interceptors.i.type", "search_replace"}}),
             Contains("searchPattern: is missing"));
  CHECK_THAT(interceptors_refusal({{"interceptors", "i"},
                                   {"interceptors.i.type", "search_replace"},
                                   {"interceptors.i.searchPattern", "a"},
                                   {"interceptors.i.replaceString", "$1"}}),
             Contains("no group 1"));
  CHECK_THAT(interceptors_refusal(
                 {{"interceptors", "i"}, {"interceptors.i.type", "static"}, {"interceptors.i.colour", "red"}}),
             Contains("colour"));
  CHECK_THAT(interceptors_refusal({{"interceptors", "i"},
                                   {"interceptors.i.type", "regex_extractor"},
                                   {"interceptors.i.regex", "(a)"},
                                   {"interceptors.i.serializers", "s"}}),
             Contains("serializers.s.name: is missing"));
}
