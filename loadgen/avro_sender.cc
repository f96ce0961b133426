#include "loadgen/avro_sender.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>

#include "loadgen/acknowledged.h"
#include "sources/avro/avro_ipc.h"

namespace sluice::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kRequestBuffer = 8192;  // Java's clients send a request in buffers of this size

// A call sent and not answered yet: its events, to be sent again if it fails.
struct Call {
  int32_t serial = 0;
  uint64_t first_sequence = 0;  // its events' sequence numbers, consecutive
  size_t count = 0;
  Clock::time_point written;
  std::string events;  // encoded AvroFlumeEvents
};

class AvroConnection {
 public:
  AvroConnection(const SendOptions& options, uint32_t id, Target target)
      : options_(options), target_(std::move(target)), writer_(options.format, id), id_(std::to_string(id)) {
    result.id = id;
    result.target = target_.host + ":" + std::to_string(target_.port);
  }
  ~AvroConnection() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Sends until `count` events or `until`, at `rate` per second (0: as the window allows).
  void run(uint64_t count, double rate, Clock::time_point start, Clock::time_point until) {
    while (Clock::now() < until && (count == 0 || result.sent < count || !resend_.empty())) {
      if (fd_ < 0 && !open(until)) continue;
      if (!resend_.empty() && window_open()) {
        resend_first();
        continue;
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      uint64_t due = rate > 0 ? static_cast<uint64_t>(rate * elapsed) + 1 : UINT64_MAX;
      if (count) due = std::min(due, count);
      if (due > result.sent && window_open())
        send_new(static_cast<size_t>(std::min<uint64_t>(due - result.sent, options_.avro_batch)));
      else
        read_answers(5);
    }
    const auto final_until = Clock::now() + kFinalWait;
    while ((!unanswered_.empty() || !resend_.empty()) && Clock::now() < final_until) {
      if (fd_ < 0 && !open(final_until)) continue;
      if (!resend_.empty() && window_open()) resend_first();
      read_answers(20);
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    for (const Call& c : unanswered_) declare_unanswered(result, c.first_sequence, c.count);
    for (const Call& c : resend_) declare_unanswered(result, c.first_sequence, c.count);
  }

  ConnectionResult result;
  uint64_t acknowledged = 0;
  std::vector<float> latencies_ms;

 private:
  // Until the handshake is answered, one call at a time (Java's client waits for it likewise).
  bool window_open() const {
    return unanswered_.size() < (handshaken_ ? static_cast<size_t>(options_.avro_window) : 1);
  }

  bool open(Clock::time_point until) {
    if (opened_once_) {
      ++result.reconnects;
      std::this_thread::sleep_for(kReconnectBackoff);  // pacing a retry, not synchronisation
    }
    opened_once_ = true;
    if (Clock::now() >= until) return false;
    std::string error;
    fd_ = connect_to(target_, false, error);
    if (fd_ < 0) {
      result.error = error;
      ++result.connects_failed;
      return false;
    }
    // A receiver that stops reading holds a write at most this long, then the connection is made
    // again (the run stays bounded in time).
    const timeval bound{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    decoder_ = std::make_unique<avro::FrameDecoder>(1 << 20);
    handshaken_ = false;
    handshake_sent_ = false;
    return true;
  }

  // The oldest call to send again, taken out of the queue before it is sent (a failed write puts
  // every unanswered call, this one included, back at the queue's front).
  void resend_first() {
    Call call = std::move(resend_.front());
    resend_.pop_front();
    send_call(std::move(call));
  }

  void send_new(size_t n) {
    messages_.clear();
    ends_.clear();
    Call call;
    call.first_sequence = writer_.next_sequence();
    call.count = n;
    writer_.write(messages_, n, &ends_);
    const std::vector<std::pair<std::string, std::string>> headers{
        {"timestamp", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count())},
        {"host", "sluice-loadgen"},
        {"connection", id_}};
    size_t begin = 0;
    for (size_t i = 0; i < n; ++i) {
      avro::append_event(headers, std::string_view(messages_).substr(begin, ends_[i] - begin), call.events);
      begin = ends_[i];
    }
    result.sent += n;
    send_call(std::move(call));
  }

  void send_call(Call call) {
    call.serial = static_cast<int32_t>(serial_++);  // wraps, as Java's int does
    call.written = Clock::now();
    const bool handshake = !handshaken_ && !handshake_sent_;
    if (handshake) {
      handshake_sent_ = true;
      handshake_serial_ = call.serial;
    }
    const std::string frame = avro::encode_frame(
        call.serial, avro::append_batch_request(call.events, call.count, handshake, false), kRequestBuffer);
    unanswered_.push_back(std::move(call));
    write_all(frame);  // a failure is seen by the next read: the calls go again
  }

  void write_all(std::string_view bytes) {
    while (fd_ >= 0 && !bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(std::strerror(errno));
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  // The connection is gone: every unanswered call goes again on the next one, in order.
  void fail(const std::string& why) {
    result.error = why;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    while (!unanswered_.empty()) {
      resend_.push_front(std::move(unanswered_.back()));
      unanswered_.pop_back();
    }
  }

  void read_answers(int wait_ms) {
    if (fd_ < 0) return;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return;
    char buffer[64 * 1024];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) return fail(n == 0 ? "the receiver closed the connection" : std::strerror(errno));
    frames_.clear();
    if (std::string broken = decoder_->feed(std::string_view(buffer, static_cast<size_t>(n)), frames_); !broken.empty())
      return fail("the receiver's answer is not Avro RPC: " + broken);
    for (const avro::Frame& frame : frames_)
      if (!answered(frame)) return;
  }

  // One answer; false if the connection is given up.
  bool answered(const avro::Frame& frame) {
    const auto it =
        std::find_if(unanswered_.begin(), unanswered_.end(), [&](const Call& c) { return c.serial == frame.serial; });
    if (it == unanswered_.end()) return true;  // not ours (cannot be: each call is answered once)
    std::string why;
    const std::optional<avro::CallResponse> response =
        avro::read_response(frame.message, handshake_sent_ && frame.serial == handshake_serial_, why);
    if (!response || response->handshake == avro::HandshakeMatch::none) {
      fail(response ? "the receiver does not speak Flume's protocol" : "an answer that is not Avro RPC: " + why);
      return false;
    }
    if (response->handshake) handshaken_ = true;
    Call call = std::move(*it);
    unanswered_.erase(it);
    if (response->status == avro::Status::ok) {
      acknowledged += call.count;
      latencies_ms.push_back(std::chrono::duration<float, std::milli>(Clock::now() - call.written).count());
      return true;
    }
    result.error = response->status ? "a call answered FAILED" : "a call answered with an error: " + response->error;
    resend_.push_back(std::move(call));  // as Flume's sink: rolled back, sent again
    return true;
  }

  const SendOptions& options_;
  const Target target_;
  EventWriter writer_;
  const std::string id_;
  int fd_ = -1;
  bool opened_once_ = false;
  bool handshaken_ = false;
  bool handshake_sent_ = false;  // on this connection (its call's serial below)
  int32_t handshake_serial_ = 0;
  uint32_t serial_ = 0;
  std::unique_ptr<avro::FrameDecoder> decoder_;
  std::vector<avro::Frame> frames_;
  std::deque<Call> unanswered_, resend_;
  std::string messages_;
  std::vector<size_t> ends_;
};

}  // namespace

SendResult send_avro(const SendOptions& options) {
  if (options.targets.empty()) throw std::invalid_argument("no target");
  if (options.avro_window < 1) throw std::invalid_argument("--window must be at least 1");
  if (options.avro_batch < 1) throw std::invalid_argument("--batch must be at least 1");
  SendResult result = send_acknowledged<AvroConnection>(options);
  result.avro = true;
  result.relp_window = options.avro_window;
  return result;
}

}  // namespace sluice::loadgen
