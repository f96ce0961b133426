#pragma once
// Flume's interceptors (`<source>.interceptors = i1 i2`, applied in order): each sees the event a
// source has just made, and may set, change or remove its headers, rewrite its body, or filter it
// out. They run on the source's io thread, on the last event of the batch being built, before the
// next is read: what they set is written once per event, after all of them, as the event's header
// block (event_headers.h). A filtered event is taken back out of the batch and counted by the
// source (sluice_source_events_filtered_total): never silently gone.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/api/event_batch.h"

namespace sluice {

// The event being made, as interceptors see it: its parsed fields and body, the headers set so
// far. Views it returns are valid until the next change.
class InterceptedEvent {
 public:
  InterceptedEvent(EventBatchBuilder& builder, HeaderWriter& headers, int64_t now_ms)
      : builder_(builder), headers_(headers), now_ms_(now_ms) {}

  // The header's value: set (or removed) by an interceptor before, else the parsed field of that
  // name (EventBatch::header()); nullopt if none. Numbers are formatted into `scratch` (24 bytes).
  std::optional<std::string_view> header(std::string_view name, char* scratch) const;
  void set_header(std::string_view name, std::string_view value) { headers_.set(name, value); }
  void remove_header(std::string_view name) { headers_.remove(name); }
  // The names of the headers the event has now: its parsed fields' (Flume's names: host,
  // Facility, Severity, timestamp, and the source's portHeader/clientIPHeader/...) and those set.
  std::vector<std::string> header_names() const;

  std::string_view body() const;
  void set_body(std::string_view body);

  // When the event's read began (ms since the epoch): the timestamp interceptor's "now".
  int64_t now_ms() const { return now_ms_; }
  bool body_rewritten() const { return body_rewritten_; }

 private:
  EventBatchBuilder& builder_;
  HeaderWriter& headers_;
  const int64_t now_ms_;
  bool body_rewritten_ = false;
};

class Interceptor {
 public:
  virtual ~Interceptor() = default;
  // False: the event is filtered out. Called from several io threads at once: const, and any
  // state of its own is per thread.
  virtual bool intercept(InterceptedEvent& event) const = 0;
  // The headers it may set or remove, if it can say (nullopt: any, e.g. a name matching a
  // pattern): what lets a sink or a selector skip looking in the header blocks for the others.
  virtual std::optional<std::vector<std::string>> headers_touched() const = 0;
  // When what it does is the same for every event read at the same time (now_ms) but for
  // whether the event has some headers (preserveExisting): those headers' names (none: it
  // looks at nothing of the event). nullopt (the default): it reads the event, or draws at
  // random. What lets a chain of such interceptors make one header block per read.
  virtual std::optional<std::vector<std::string>> uniform_but_for() const { return std::nullopt; }
};

// A source's interceptors, in order; shared by its io threads.
class InterceptorChain {
 public:
  explicit InterceptorChain(std::vector<std::unique_ptr<Interceptor>> interceptors);
  bool empty() const { return interceptors_.empty(); }
  size_t size() const { return interceptors_.size(); }
  // Applies them to `builder`'s last event; false: it was filtered out (and is dropped from the
  // batch here).
  bool apply(EventBatchBuilder& builder, int64_t now_ms) const;
  // The headers they may set, together; null: any name (one of them cannot say).
  const std::vector<std::string>* headers_touched() const { return touched_.get(); }

 private:
  std::vector<std::unique_ptr<Interceptor>> interceptors_;
  // True when the chain makes the same header block for every event of a read (each of
  // uniform_but_for(), and no header they look for can come with an event).
  bool uniform_for(const HeaderNames* source_names) const;

  std::shared_ptr<const std::vector<std::string>> touched_;  // every one's headers_touched(); null: any
  bool uniform_ = false;                                     // every one is uniform_but_for() something
  std::vector<std::string> looks_for_;                       // the headers they look for
  const uint64_t id_;                                        // unique among chains: names the thread's cached block
};

// The headers a source's events may carry beside their parsed fields: its interceptors' (`chain`,
// null: none) and the names it gives its port, client address and client name (`names`, null:
// none). nullopt: any name. What lets a sink bound what events can name (Source::headers_made()).
std::optional<std::vector<std::string>> headers_made(const InterceptorChain* chain, const HeaderNames* names);

}  // namespace sluice
