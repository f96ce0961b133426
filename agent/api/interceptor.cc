#include "agent/api/interceptor.h"

#include <algorithm>

namespace sluice {
namespace {

// Flume's names of the parsed fields an event carries as headers.
constexpr std::string_view kFieldHeaders[] = {"host",    "Facility",  "Severity",           "priority",
                                              "version", "timestamp", "flume.syslog.status"};

}  // namespace

std::optional<std::string_view> InterceptedEvent::header(std::string_view name, char* scratch) const {
  if (const std::optional<HeaderEntry> set = headers_.find(name))
    return set->removed ? std::nullopt : std::optional<std::string_view>(set->value);
  return builder_.last_header(name, scratch);
}

std::vector<std::string> InterceptedEvent::header_names() const {
  std::vector<std::string> out;
  char scratch[24];
  auto add = [&](std::string_view name) {
    if (name.empty() || std::find(out.begin(), out.end(), name) != out.end()) return;
    if (header(name, scratch)) out.emplace_back(name);
  };
  for (std::string_view name : kFieldHeaders) add(name);
  if (const HeaderNames* names = builder_.header_names()) {
    add(names->port);
    add(names->client_ip);
    add(names->client_host);
  }
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

InterceptorChain::InterceptorChain(std::vector<std::unique_ptr<Interceptor>> interceptors)
    : interceptors_(std::move(interceptors)) {
  auto touched = std::make_shared<std::vector<std::string>>();
  for (const auto& interceptor : interceptors_) {
    std::optional<std::vector<std::string>> names = interceptor->headers_touched();
    if (!names) return;  // any name: touched_ stays null
    touched->insert(touched->end(), names->begin(), names->end());
  }
  touched_ = std::move(touched);
}

bool InterceptorChain::apply(EventBatchBuilder& builder, int64_t now_ms) const {
  if (builder.header_block_names() != touched_) builder.set_header_block_names(touched_);
  thread_local HeaderWriter headers;
  headers.clear();
  InterceptedEvent event(builder, headers, now_ms);
  for (const auto& interceptor : interceptors_)
    if (!interceptor->intercept(event)) {
      builder.drop_last();
      return false;
    }
  builder.set_last_headers(headers.block(), event.body_rewritten());
  return true;
}

}  // namespace sluice
