#include "sources/pipeline/event_maker.h"

namespace sluice::pipeline {

EventMaker::EventMaker(std::unique_ptr<EventFormat> format, EventKind kind,
                       std::shared_ptr<const InterceptorChain> interceptors, std::shared_ptr<const HeaderNames> names,
                       ChannelDelivery delivery, size_t batch_size, size_t expected_bytes)
    : format_(std::move(format)),
      interceptors_(std::move(interceptors)),
      selector_(delivery.selector()),
      batch_size_(batch_size),
      builder_(batch_size, expected_bytes),
      delivery_(std::move(delivery)),
      now_ms_(format_->begin_read()) {
  builder_.set_kind(kind);
  builder_.set_header_names(std::move(names));
}

bool EventMaker::make(std::string_view message, MessageTraits traits, const MessageOrigin& origin, MadeTally& tally) {
  EventRecord& e = format_->decode(message, traits, origin.port_index, builder_, tally);
  e.port = origin.port;
  if (!origin.client.empty()) {
    e.client_offset = builder_.append_to_last(origin.client);
    e.client_ip_length = static_cast<uint8_t>(origin.client_ip_length);
    e.client_host_length = static_cast<uint8_t>(origin.client.size() - origin.client_ip_length);
  }
  if (interceptors_ && !interceptors_->apply(builder_, now_ms_)) {
    ++tally.filtered;  // taken back out of the batch
    return false;
  }
  if (!selector_->single_route()) builder_.set_last_route(selector_->route(builder_));
  return true;
}

bool EventMaker::flush() {
  if (builder_.empty()) return true;
  return deliver(seal());
}

}  // namespace sluice::pipeline
