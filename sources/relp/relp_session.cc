#include "sources/relp/relp_session.h"

#include <vector>

namespace sluice::relp {
namespace {

// The offers of an `open`: "name=value,value" lines.
std::vector<std::string_view> offered(std::string_view offers, std::string_view name) {
  while (!offers.empty()) {
    const size_t end = offers.find('\n');
    std::string_view line = offers.substr(0, end);
    offers.remove_prefix(end == std::string_view::npos ? offers.size() : end + 1);
    const size_t equals = line.find('=');
    if (line.substr(0, equals) != name) continue;
    std::vector<std::string_view> values;
    std::string_view rest = equals == std::string_view::npos ? std::string_view() : line.substr(equals + 1);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      values.push_back(rest.substr(0, comma));
      rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    }
    return values;
  }
  return {};
}

}  // namespace

std::string relp_response(uint32_t txnr, std::string_view data) {
  std::string out = std::to_string(txnr) + " rsp " + std::to_string(data.size());
  if (!data.empty()) (out += ' ') += data;
  out += '\n';
  return out;
}

RelpSession::RelpSession(const RelpSettings& settings, std::shared_ptr<net::AckWaker> waker)
    : settings_(settings), framer_(settings.max_data_size), acks_(std::make_shared<net::AckQueue>(std::move(waker))) {}

std::string RelpSession::feed(std::string_view data, net::MessageSink& sink, net::ReadTally& tally) {
  std::string broken;
  std::string why = framer_.feed(data, [&](const RelpFrame& frame) {
    if (broken.empty()) broken = command(frame, sink, tally);
  });
  return broken.empty() ? why : broken;
}

std::string RelpSession::open(const RelpFrame& frame) {
  if (open_) {
    acks_->reply_in_order(relp_response(frame.txnr, "500 protocol error: connection already open"));
    return "a second open on an open session";
  }
  const std::vector<std::string_view> commands = offered(frame.data, "commands");
  bool syslog = false;
  for (std::string_view c : commands) syslog |= c == "syslog";
  if (!syslog) {
    acks_->reply_in_order(relp_response(frame.txnr, "500 required command not supported by client"));
    return "the client does not offer the syslog command";
  }
  open_ = true;
  acks_->reply_in_order(
      relp_response(frame.txnr, "200 OK\nrelp_version=0\nrelp_software=sluice," SLUICE_VERSION "\ncommands=syslog"));
  return "";
}

std::string RelpSession::command(const RelpFrame& frame, net::MessageSink& sink, net::ReadTally& tally) {
  if (closing_) return "a frame after close";
  if (frame.command == "open") return open(frame);
  if (!open_) {
    acks_->reply_in_order(relp_response(frame.txnr, "500 session not open"));
    return "a command before open";
  }
  if (frame.command == "syslog") {
    if (frame.data.empty()) {  // nothing to keep: answered at once (a plain TCP blank line is skipped too)
      acks_->reply_in_order(relp_response(frame.txnr, "200 OK"));
      return "";
    }
    const net::AckQueue::Ticket ticket = acks_->expect(relp_response(frame.txnr, "200 OK"));
    const bool truncated = frame.data.size() > settings_.event_size;
    ++tally.frames;
    tally.truncated += truncated;
    sink.message(truncated ? frame.data.substr(0, settings_.event_size) : frame.data, {.truncated = truncated}, ticket);
    return "";
  }
  if (frame.command == "close") {
    closing_ = true;
    acks_->reply_in_order(relp_response(frame.txnr, ""));
    return "";
  }
  // A command we did not offer (the client's own rsp, or something newer): refused, the session goes on.
  acks_->reply_in_order(relp_response(frame.txnr, "500 command not supported"));
  return "";
}

}  // namespace sluice::relp
