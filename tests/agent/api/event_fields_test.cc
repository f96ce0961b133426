// The one table of an event's fields as headers, and the view every reader goes through: a sink,
// a selector, an interceptor, the JSON format and Flume's event agree on a name; an event that is
// not syslog has the headers it came with and where it came from, nothing parsed.

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "agent/api/event_batch.h"
#include "agent/api/event_json.h"
#include "channels/spillable/batch_codec.h"

using namespace sluice;

namespace {

// An RFC 3164 line that did not parse (Invalid) from 10.0.0.9 on port 5140, with the header
// block `block`.
EventBatchBuilder& invalid_line(EventBatchBuilder& builder, const std::string& block = {}) {
  builder.set_header_names(std::make_shared<HeaderNames>(HeaderNames{"port", "clientIP", ""}));
  EventRecord& e = builder.append("no pri here");
  e.status = EventStatus::invalid;
  e.timestamp_ms = 1700000000000;
  e.port = 5140;
  e.client_offset = builder.append_to_last("10.0.0.9");
  e.client_ip_length = 8;
  builder.set_last_headers(block);
  return builder;
}

// A Flume event: a body and the headers it came with.
EventBatch flume_event() {
  EventBatchBuilder builder;
  builder.set_kind(EventKind::plain);
  builder.set_header_names(std::make_shared<HeaderNames>(HeaderNames{"", "clientIP", ""}));
  EventRecord& e = builder.append("a body");
  e.client_offset = builder.append_to_last("10.0.0.7");
  e.client_ip_length = 8;
  HeaderWriter headers;
  headers.set("timestamp", "42");
  headers.set("app", "billing");
  builder.set_last_headers(headers.block());
  return builder.seal();
}

}  // namespace

TEST_CASE("every field has one row: a name, the names a property may use, in any case", "[event_fields]") {
  for (const FieldRow& row : kEventFields) {
    INFO(row.name);
    CHECK(event_field_from_name(row.name) == row.field);
    CHECK(&field_row(row.field) == &row);
  }
  // Flume's spellings, as its syslog sources set them.
  CHECK(field_row(EventField::facility).name == "Facility");
  CHECK(field_row(EventField::severity).name == "Severity");
  CHECK(field_row(EventField::status).name == "flume.syslog.status");
  CHECK(field_row(EventField::timestamp).name == "timestamp");
  CHECK(event_field_from_name("HOSTNAME") == EventField::host);
  CHECK(event_field_from_name("program") == EventField::app);
  CHECK(event_field_from_name("Flume.Syslog.Status") == EventField::status);
  CHECK_FALSE(event_field_from_name("hostnam"));
  CHECK_FALSE(event_field_from_name(""));
}

TEST_CASE("a selector, a sink and an interceptor read one header the same way", "[event_fields]") {
  EventBatchBuilder builder;
  invalid_line(builder);
  char scratch[24];
  const HeaderRef status("flume.syslog.status");
  // The selector's view while the batch is built, the interceptor's (Flume's names), the sink's.
  CHECK(builder.last_headers().get(status, scratch) == "Invalid");
  CHECK(builder.last_headers().flume("flume.syslog.status", scratch) == "Invalid");
  const EventBatch batch = builder.seal();
  CHECK(batch.header(batch[0], status, scratch) == "Invalid");
  CHECK(batch.may_have(status));
  // A line that did not parse has no PRI: no priority header anywhere.
  CHECK_FALSE(batch.header(batch[0], HeaderRef("priority"), scratch));
  CHECK_FALSE(batch.headers(batch[0]).flume("priority", scratch));
  // The interceptor's view is Flume's names, exactly; a sink's any spelling.
  CHECK_FALSE(batch.headers(batch[0]).flume("severity", scratch));
  CHECK(batch.header(batch[0], HeaderRef("severity"), scratch) == "5");
  // The source's header names.
  CHECK(batch.header(batch[0], HeaderRef("clientIP"), scratch) == "10.0.0.9");
  CHECK(batch.headers(batch[0]).flume("port", scratch) == "5140");
}

TEST_CASE("a header block's word on a field is every reader's: set, or removed", "[event_fields]") {
  HeaderWriter block;
  block.set("Severity", "7");
  block.remove("host");
  EventBatchBuilder builder;
  invalid_line(builder, block.block());
  char scratch[24];
  CHECK(builder.last_headers().get(HeaderRef("Severity"), scratch) == "7");
  const EventBatch batch = builder.seal();
  CHECK(batch.header(batch[0], HeaderRef("Severity"), scratch) == "7");
  CHECK_FALSE(batch.header(batch[0], HeaderRef("host"), scratch));
  const auto all = batch.all_headers(batch[0]);
  CHECK(std::count(all.begin(), all.end(), std::pair<std::string, std::string>{"Severity", "7"}) == 1);
  std::string json;
  append_event_json(batch, batch[0], json);
  CHECK(json.find("\"Severity\":\"7\"") != std::string::npos);
  CHECK(json.find("\"Severity\":5") == std::string::npos);
}

TEST_CASE("Flume's event and the JSON format write the table's fields in its order", "[event_fields]") {
  EventBatchBuilder builder;
  invalid_line(builder);
  const EventBatch batch = builder.seal();
  using Headers = std::vector<std::pair<std::string, std::string>>;
  CHECK(batch.all_headers(batch[0]) == Headers{{"timestamp", "1700000000000"},
                                               {"Facility", "1"},
                                               {"Severity", "5"},
                                               {"flume.syslog.status", "Invalid"},
                                               {"port", "5140"},
                                               {"clientIP", "10.0.0.9"}});
  std::string json;
  append_event_json(batch, batch[0], json);
  CHECK(json ==
        "{\"timestamp\":1700000000000,\"Facility\":1,\"Severity\":5,\"flume.syslog.status\":\"Invalid\","
        "\"port\":5140,\"clientIP\":\"10.0.0.9\",\"message\":\"no pri here\"}");
}

TEST_CASE("an event that is not syslog is its body and the headers it came with, and where it came from",
          "[event_fields]") {
  const EventBatch batch = flume_event();
  char scratch[24];
  CHECK(batch.kind() == EventKind::plain);
  CHECK(batch.header(batch[0], HeaderRef("timestamp"), scratch) == "42");
  CHECK(batch.header(batch[0], HeaderRef("app"), scratch) == "billing");
  CHECK_FALSE(batch.header(batch[0], HeaderRef("Severity"), scratch));
  CHECK_FALSE(batch.header(batch[0], HeaderRef("host"), scratch));
  CHECK(batch.header(batch[0], HeaderRef("clientIP"), scratch) == "10.0.0.7");
  CHECK(batch.may_have(HeaderRef("clientIP")));
  CHECK(batch.may_have(HeaderRef("app")));  // its block may name it
  using Headers = std::vector<std::pair<std::string, std::string>>;
  CHECK(batch.all_headers(batch[0]) == Headers{{"clientIP", "10.0.0.7"}, {"timestamp", "42"}, {"app", "billing"}});
  std::string json;
  append_event_json(batch, batch[0], json);
  CHECK(json == "{\"clientIP\":\"10.0.0.7\",\"timestamp\":\"42\",\"app\":\"billing\",\"message\":\"a body\"}");
}

TEST_CASE("a batch of events that are not syslog spills and comes back as such", "[event_fields][spill]") {
  const EventBatch batch = flume_event();
  std::string encoded;
  spill::encode_batch(batch, encoded);
  const auto decoded = spill::decode_batch(encoded);
  REQUIRE(decoded);
  CHECK(decoded->kind() == EventKind::plain);
  CHECK(decoded->all_headers((*decoded)[0]) == batch.all_headers(batch[0]));
  EventBatchBuilder syslog_builder;
  invalid_line(syslog_builder);
  std::string syslog_encoded;
  spill::encode_batch(syslog_builder.seal(), syslog_encoded);
  CHECK(spill::decode_batch(syslog_encoded)->kind() == EventKind::syslog);
}

TEST_CASE("a sender's own headers are every reader's, whatever the interceptors touch", "[event_fields]") {
  EventBatchBuilder builder;
  builder.set_kind(EventKind::plain);
  builder.set_header_block_names(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"at"}));
  builder.append("a body");
  HeaderWriter came_with;
  came_with.set("n", "1");
  builder.set_last_headers(came_with.block());
  HeaderWriter intercepted;
  intercepted.set("at", "2");
  builder.set_last_headers(intercepted.block());  // after the first: both stay
  const EventBatch batch = builder.seal();
  char scratch[24];
  CHECK(batch.may_have(HeaderRef("n")));
  CHECK(batch.header(batch[0], HeaderRef("n"), scratch) == "1");
  CHECK(batch.header(batch[0], HeaderRef("at"), scratch) == "2");
}

TEST_CASE("a body rewritten before a header block is set stays rewritten", "[event_fields]") {
  EventBatchBuilder builder;
  EventRecord& e = builder.append("<13>original");
  e.body_offset = builder.append_to_last("rewritten");
  e.body_length = 9;
  builder.set_last_headers({}, true);
  HeaderWriter headers;
  headers.set("k", "v");
  builder.set_last_headers(headers.block());
  const EventBatch batch = builder.seal();
  CHECK(batch.body_rewritten(batch[0]));
  std::string json;
  append_event_json(batch, batch[0], json);
  CHECK(json.find("\"message\":\"rewritten\"") != std::string::npos);
}

TEST_CASE("a record written before kinds existed (flags word 0) reads as syslog", "[event_fields][spill]") {
  EventBatchBuilder builder;  // no header names: the flags word is 0
  builder.append("<13>line");
  std::string encoded;
  spill::encode_batch(builder.seal(), encoded);
  const auto decoded = spill::decode_batch(encoded);
  REQUIRE(decoded);
  CHECK(decoded->kind() == EventKind::syslog);
  char scratch[24];
  CHECK(decoded->header((*decoded)[0], HeaderRef("Severity"), scratch) == "5");
}
