#include "sources/avro/avro_ipc.h"

#include <arpa/inet.h>

#include <cstring>

#include "sources/avro/avro_binary.h"

namespace sluice::avro {
namespace {

// As Avro 1.11.0's Protocol.toString() prints flume.avdl: its licence header is the protocol's
// "doc" (the IDL took a leading /** for a doc comment). Pieces of one string, joined by the
// compiler.
constexpr char kProtocolText[] =
    R"json({"protocol":"AvroSourceProtocol","namespace":"org.apache.flume.source.avro","doc":"* Licensed to the)json"
    R"json( Apache Software Foundation (ASF) under one\n * or more contributor license agreements.  See the NOT)json"
    R"json(ICE file\n * distributed with this work for additional information\n * regarding copyright ownership)json"
    R"json(.  The ASF licenses this file\n * to you under the Apache License, Version 2.0 (the\n * \"License\"))json"
    R"json(; you may not use this file except in compliance\n * with the License.  You may obtain a copy of the)json"
    R"json( License at\n *\n * http://www.apache.org/licenses/LICENSE-2.0\n *\n * Unless required by applicable)json"
    R"json( law or agreed to in writing,\n * software distributed under the License is distributed on an\n * \")json"
    R"json(AS IS\" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY\n * KIND, either express or implied.  See the)json"
    R"json( License for the\n * specific language governing permissions and limitations\n * under the License.")json"
    R"json(,"types":[{"type":"enum","name":"Status","symbols":["OK","FAILED","UNKNOWN"]},{"type":"record","name)json"
    R"json(":"AvroFlumeEvent","fields":[{"name":"headers","type":{"type":"map","values":"string"}},{"name":"bod)json"
    R"json(y","type":"bytes"}]}],"messages":{"append":{"request":[{"name":"event","type":"AvroFlumeEvent"}],"re)json"
    R"json(sponse":"Status"},"appendBatch":{"request":[{"name":"events","type":{"type":"array","items":"AvroFlu)json"
    R"json(meEvent"}}],"response":"Status"}}})json";

uint32_t read_be32(const char* p) {
  uint32_t value;
  std::memcpy(&value, p, 4);
  return ntohl(value);
}

void append_be32(std::string& out, uint32_t value) {
  const uint32_t be = htonl(value);
  out.append(reinterpret_cast<const char*>(&be), 4);
}

// A map<bytes> or map<string> read and its values skipped (request and response metadata).
void skip_map(BinaryReader& in) {
  for (int64_t count; (count = in.read_block_count(kMaxHeadersPerEvent)) > 0;)
    for (int64_t i = 0; i < count; ++i) {
      in.read_bytes();
      in.read_bytes();
    }
}

void write_handshake_answer(BinaryWriter& out, HandshakeMatch match) {
  out.write_int(static_cast<int32_t>(match));
  if (match == HandshakeMatch::both) {
    out.write_long(0);  // serverProtocol: null
    out.write_long(0);  // serverHash: null
  } else {
    out.write_long(1);
    out.write_bytes(kFlumeProtocol);
    out.write_long(1);
    out.write_fixed(kFlumeProtocolHash);
  }
  out.write_long(0);  // meta: null
}

std::string response_head(std::optional<HandshakeMatch> handshake) {
  std::string out;
  BinaryWriter w(out);
  if (handshake) write_handshake_answer(w, *handshake);
  w.write_long(0);  // response metadata: an empty map
  return out;
}

}  // namespace

const std::string_view kFlumeProtocol(kProtocolText, sizeof kProtocolText - 1);
const std::string_view kFlumeProtocolHash("\x86\xaa\xda\xe2\xc4\x54\x74\xc0\xfe\x93\xff\xd0\xf2\x35\x0a\x65", 16);

std::string FrameDecoder::feed(std::string_view data, std::vector<Frame>& frames) {
  if (used_ > 0 && used_ >= pending_.size() / 2) {  // what was cut out goes, now and then
    pending_.erase(0, used_);
    used_ = 0;
  }
  pending_ += data;
  while (true) {
    const std::string_view rest = std::string_view(pending_).substr(used_);
    if (rest.size() < 8) return {};
    if (scan_.count < 0) {
      scan_.count = static_cast<int32_t>(read_be32(rest.data() + 4));
      // Java never sends a frame of no buffers, nor buffers of fewer than 8 KiB but its last
      // (Avro's ByteBufferOutputStream): more than one per 64 bytes allowed is not Java's frame.
      if (scan_.count <= 0 || static_cast<uint64_t>(scan_.count) > max_message_ / 64 + 16)
        return "a frame of " + std::to_string(scan_.count) + " buffers";
    }
    while (scan_.read < scan_.count) {
      if (rest.size() < scan_.at + 4) return {};
      const uint32_t length = read_be32(rest.data() + scan_.at);
      if (length > max_message_ - std::min(scan_.total, max_message_))
        return "a frame of more than " + std::to_string(max_message_) + " bytes (maxFrameSize)";
      if (rest.size() < scan_.at + 4 + length) return {};
      scan_.total += length;
      scan_.at += 4 + length;
      ++scan_.read;
    }
    Frame frame{static_cast<int32_t>(read_be32(rest.data())), {}};
    frame.message.reserve(scan_.total);
    for (size_t p = 8; p < scan_.at;) {
      const uint32_t length = read_be32(rest.data() + p);
      frame.message.append(rest.data() + p + 4, length);
      p += 4 + length;
    }
    frames.push_back(std::move(frame));
    used_ += scan_.at;
    scan_ = {};
  }
}

std::string encode_frame(int32_t serial, std::string_view message, size_t buffer_max) {
  const size_t buffers = message.empty() ? 1 : 1 + (message.size() - 1) / buffer_max;
  std::string out;
  out.reserve(8 + 4 * buffers + message.size());
  append_be32(out, static_cast<uint32_t>(serial));
  append_be32(out, static_cast<uint32_t>(buffers));
  for (size_t i = 0; i < buffers; ++i) {
    const std::string_view piece = message.substr(i * buffer_max, buffer_max);
    append_be32(out, static_cast<uint32_t>(piece.size()));
    out += piece;
  }
  return out;
}

std::optional<CallRequest> read_call(std::string_view message, bool with_handshake, std::string& why) {
  BinaryReader in(message);
  CallRequest call;
  if (with_handshake) {
    HandshakeRequest h;
    h.client_hash = in.read_fixed(16);
    const int64_t protocol_branch = in.read_long();
    if (protocol_branch == 1)
      h.client_protocol = in.read_bytes();
    else if (protocol_branch != 0)
      in.fail("a handshake's clientProtocol is neither null nor a string");
    h.server_hash = in.read_fixed(16);
    const int64_t meta_branch = in.read_long();
    if (meta_branch == 1)
      skip_map(in);
    else if (meta_branch != 0)
      in.fail("a handshake's meta is neither null nor a map");
    call.handshake = h;
  }
  skip_map(in);
  call.message = in.read_bytes();
  if (!in.ok()) {
    why = std::string("not an Avro request: ") + in.error();
    return std::nullopt;
  }
  call.parameters = message.substr(static_cast<size_t>(in.position() - message.data()));
  return call;
}

HandshakeMatch match_handshake(const HandshakeRequest& request) {
  const bool knows_client =
      request.client_hash == kFlumeProtocolHash ||
      (request.client_protocol && request.client_protocol->find("\"appendBatch\"") != std::string_view::npos &&
       request.client_protocol->find("\"append\"") != std::string_view::npos &&
       request.client_protocol->find("\"AvroFlumeEvent\"") != std::string_view::npos);
  if (!knows_client) return HandshakeMatch::none;
  return request.server_hash == kFlumeProtocolHash ? HandshakeMatch::both : HandshakeMatch::client;
}

std::string status_response(std::optional<HandshakeMatch> handshake, Status status) {
  std::string out = response_head(handshake);
  BinaryWriter w(out);
  w.write_boolean(false);
  w.write_int(static_cast<int32_t>(status));
  return out;
}

std::string error_response(std::optional<HandshakeMatch> handshake, std::string_view error) {
  std::string out = response_head(handshake);
  BinaryWriter w(out);
  w.write_boolean(true);
  w.write_long(0);  // the error union's one branch: a string
  w.write_bytes(error);
  return out;
}

std::string handshake_response(HandshakeMatch match) {
  std::string out;
  BinaryWriter w(out);
  write_handshake_answer(w, match);
  return out;
}

namespace {

// Skips one AvroFlumeEvent; false if it is not one.
// Past one event, its headers within `bounds`.
bool skip_event(BinaryReader& in, const EventBounds& bounds) {
  read_event_from(in, [&](std::string_view name, std::string_view value, BinaryReader& reader) {
    if (name.size() > bounds.max_name) {
      reader.fail("a header name of " + std::to_string(name.size()) + " bytes (at most " +
                  std::to_string(bounds.max_name) + " are kept)");
    } else if (value.size() > bounds.max_value) {
      reader.fail("header " + printable(name) + " of " + std::to_string(value.size()) + " bytes (at most " +
                  std::to_string(bounds.max_value) + " are kept)");
    }
  });
  return in.ok();
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out(text.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > 64 ? out + "..." : out;
}

bool split_events(std::string_view parameters, bool batch, const EventBounds& bounds,
                  std::vector<std::string_view>& events, std::string& why) {
  BinaryReader in(parameters);
  const size_t max_events = bounds.max_events;
  const auto take_one = [&] {
    const char* start = in.position();
    if (!skip_event(in, bounds)) return false;
    events.emplace_back(start, static_cast<size_t>(in.position() - start));
    return true;
  };
  if (!batch) {
    take_one();
  } else {
    for (int64_t count; in.ok() && (count = in.read_block_count(INT32_MAX)) > 0;) {
      if (events.size() + static_cast<size_t>(count) > max_events) {
        in.fail("more events than " + std::string(bounds.max_events_why));
        break;
      }
      for (int64_t i = 0; i < count && take_one(); ++i) {}
    }
  }
  if (in.ok() && !in.at_end()) in.fail("bytes after the events");
  if (!in.ok()) why = std::string("not Flume events: ") + in.error();
  return in.ok();
}

bool read_event(std::string_view bytes, FlumeEventView& event) {
  event.headers.clear();
  return read_event(
      bytes, [&](std::string_view name, std::string_view value) { event.headers.emplace_back(name, value); },
      event.body);
}

std::string encode_event(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body) {
  std::string out;
  append_event(headers, body, out);
  return out;
}

void append_event(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body,
                  std::string& out) {
  BinaryWriter w(out);
  if (!headers.empty()) {
    w.write_long(static_cast<int64_t>(headers.size()));
    for (const auto& [name, value] : headers) {
      w.write_bytes(name);
      w.write_bytes(value);
    }
  }
  w.write_long(0);
  w.write_bytes(body);
}

std::string append_batch_request(const std::vector<std::string>& events, bool handshake, bool with_protocol) {
  std::string joined;
  for (const std::string& e : events) joined += e;
  return append_batch_request(joined, events.size(), handshake, with_protocol);
}

std::string append_batch_request(std::string_view events, size_t count, bool handshake, bool with_protocol) {
  std::string out;
  out.reserve(events.size() + (handshake ? 64 + (with_protocol ? kFlumeProtocol.size() : 0) : 32));
  BinaryWriter w(out);
  if (handshake) {
    w.write_fixed(kFlumeProtocolHash);
    if (with_protocol) {
      w.write_long(1);
      w.write_bytes(kFlumeProtocol);
    } else {
      w.write_long(0);
    }
    w.write_fixed(kFlumeProtocolHash);
    w.write_long(1);  // meta: an empty map, as Java's clients send it
    w.write_long(0);
  }
  w.write_long(0);  // request metadata: an empty map
  w.write_bytes("appendBatch");
  if (count) {
    w.write_long(static_cast<int64_t>(count));
    out += events;
  }
  w.write_long(0);
  return out;
}

std::optional<CallResponse> read_response(std::string_view message, bool with_handshake, std::string& why) {
  BinaryReader in(message);
  CallResponse response;
  if (with_handshake) {
    const int32_t match = in.read_int();
    if (match < 0 || match > 2) in.fail("a handshake answer that is not BOTH, CLIENT or NONE");
    response.handshake = static_cast<HandshakeMatch>(match);
    for (int field = 0; field < 2; ++field) {  // serverProtocol, serverHash
      const int64_t branch = in.read_long();
      if (branch == 1)
        field == 0 ? in.read_bytes() : in.read_fixed(16);
      else if (branch != 0)
        in.fail("a handshake answer's field is neither null nor a value");
    }
    if (const int64_t meta = in.read_long(); meta == 1)
      skip_map(in);
    else if (meta != 0)
      in.fail("a handshake answer's meta is neither null nor a map");
    if (in.ok() && response.handshake == HandshakeMatch::none) return response;  // no call was made
  }
  skip_map(in);
  if (in.read_boolean()) {
    if (in.read_long() != 0) in.fail("an error of a type Flume's protocol does not have");
    response.error = std::string(in.read_bytes());
  } else {
    const int32_t status = in.read_int();
    if (status < 0 || status > 2) in.fail("a Status that is not OK, FAILED or UNKNOWN");
    response.status = static_cast<Status>(status);
  }
  if (!in.ok()) {
    why = std::string("not an Avro response: ") + in.error();
    return std::nullopt;
  }
  return response;
}

}  // namespace sluice::avro
