#include "agent/api/interceptor.h"

#include <algorithm>
#include <atomic>

namespace sluice {
namespace {

// A field a header the chain looks for names (a syslog field of Flume's name): present in some
// events and not in others.
bool names_a_field(std::string_view name) {
  for (const FieldRow& row : kEventFields)
    if ((row.where & in_flume_event) && row.name == name) return true;
  return false;
}

}  // namespace

std::optional<std::string_view> InterceptedEvent::header(std::string_view name, char* scratch) const {
  if (const std::optional<HeaderEntry> set = headers_.find(name))
    return set->removed ? std::nullopt : std::optional<std::string_view>(set->value);
  return builder_.last_headers().flume(name, scratch);
}

std::vector<std::string> InterceptedEvent::header_names() const {
  std::vector<std::string> out;
  char scratch[24];
  auto add = [&](std::string_view name) {
    if (name.empty() || std::find(out.begin(), out.end(), name) != out.end()) return;
    if (header(name, scratch)) out.emplace_back(name);
  };
  const EventHeaders had = builder_.last_headers();
  had.for_each_field(in_flume_event, [&](std::string_view name, std::string_view, bool) { add(name); });
  HeaderReader came_with(had.block());  // a sender's own headers (a Flume event's)
  for (HeaderEntry entry; came_with.next(entry);) add(entry.name);
  HeaderReader reader(headers_.block());
  for (HeaderEntry entry; reader.next(entry);) add(entry.name);
  return out;
}

std::string_view InterceptedEvent::body() const {
  const EventRecord& e = builder_.last();
  return builder_.last_bytes().substr(e.body_offset, e.body_length);
}

void InterceptedEvent::set_body(std::string_view body) {
  const std::string copy(body);  // `body` may be a view into the buffer that grows now
  const uint32_t offset = builder_.append_to_last(copy);
  EventRecord& e = builder_.last();
  e.body_offset = offset;
  e.body_length = static_cast<uint32_t>(copy.size());
  body_rewritten_ = true;
}

// Chains are told apart by a number, not their address: a reload's new chain may take an old one's.
std::atomic<uint64_t> chains_made{0};

InterceptorChain::InterceptorChain(std::vector<std::unique_ptr<Interceptor>> interceptors)
    : interceptors_(std::move(interceptors)), id_(++chains_made) {
  uniform_ = true;
  for (const auto& interceptor : interceptors_) {
    const std::optional<std::vector<std::string>> looks_for = interceptor->uniform_but_for();
    if (!looks_for) uniform_ = false;
    if (!uniform_) break;
    looks_for_.insert(looks_for_.end(), looks_for->begin(), looks_for->end());
    // A header a syslog event carries may or may not be there: not the same for every event.
    for (const std::string& name : *looks_for)
      if (names_a_field(name)) uniform_ = false;
  }
  auto touched = std::make_shared<std::vector<std::string>>();
  for (const auto& interceptor : interceptors_) {
    std::optional<std::vector<std::string>> names = interceptor->headers_touched();
    if (!names) return;  // any name: touched_ stays null
    touched->insert(touched->end(), names->begin(), names->end());
  }
  touched_ = std::move(touched);
}

bool InterceptorChain::uniform_for(const HeaderNames* source_names) const {
  if (!uniform_) return false;
  if (!source_names || looks_for_.empty()) return true;
  for (const std::string& name : looks_for_)
    if (name == source_names->port || name == source_names->client_ip || name == source_names->client_host)
      return false;
  return true;
}

bool InterceptorChain::apply(EventBatchBuilder& builder, int64_t now_ms) const {
  if (builder.header_block_names() != touched_) builder.set_header_block_names(touched_);
  // A uniform chain's block, made for the first event of a read, is every other event's too.
  struct MadeBlock {
    uint64_t chain = 0;
    int64_t now_ms = 0;
    bool kept = true;
    std::string block;
  };
  thread_local MadeBlock made;
  // An event with headers of its own (a Flume event's) may have those the chain looks for.
  const bool uniform =
      uniform_for(builder.header_names()) && (builder.kind() == EventKind::syslog || looks_for_.empty());
  if (uniform && made.chain == id_ && made.now_ms == now_ms) {
    if (!made.kept) {
      builder.drop_last();
      return false;
    }
    builder.set_last_headers(made.block);
    return true;
  }
  thread_local HeaderWriter headers;
  headers.clear();
  InterceptedEvent event(builder, headers, now_ms);
  bool kept = true;
  for (const auto& interceptor : interceptors_)
    if (!interceptor->intercept(event)) {
      kept = false;
      break;
    }
  if (uniform && !event.body_rewritten()) made = {id_, now_ms, kept, headers.block()};
  if (!kept) {
    builder.drop_last();
    return false;
  }
  builder.set_last_headers(headers.block(), event.body_rewritten());
  return true;
}

std::optional<std::vector<std::string>> headers_made(const InterceptorChain* chain, const HeaderNames* names) {
  std::vector<std::string> made;
  if (chain && !chain->empty()) {
    const std::vector<std::string>* touched = chain->headers_touched();
    if (!touched) return std::nullopt;
    made = *touched;
  }
  if (names)
    for (const std::string* name : {&names->port, &names->client_ip, &names->client_host})
      if (!name->empty()) made.push_back(*name);
  return made;
}

}  // namespace sluice
