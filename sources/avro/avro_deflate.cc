#include "sources/avro/avro_deflate.h"

#include <algorithm>

namespace sluice::avro {

DeflateStream::DeflateStream(int level) : ok_(deflateInit(&stream_, level) == Z_OK) {}

DeflateStream::~DeflateStream() {
  if (ok_) deflateEnd(&stream_);
}

void DeflateStream::compress(std::string_view data, std::string& out) {
  if (!ok_) return;
  constexpr size_t kPiece = 1u << 30;
  do {
    compress_piece(data.substr(0, kPiece), out);
    data.remove_prefix(std::min(data.size(), kPiece));
  } while (!data.empty());
}

void DeflateStream::compress_piece(std::string_view data, std::string& out) {
  stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream_.avail_in = static_cast<uInt>(data.size());
  // A flush ends on a byte boundary with an empty stored block: at most this much beyond the input.
  const size_t start = out.size();
  out.resize(start + deflateBound(&stream_, static_cast<uLong>(data.size())) + 16);
  stream_.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  stream_.avail_out = static_cast<uInt>(out.size() - start);
  while (true) {
    deflate(&stream_, Z_SYNC_FLUSH);
    if (stream_.avail_out != 0) break;
    // Not enough room after all (it cannot happen with deflateBound's figure): more.
    const size_t used = out.size() - stream_.avail_out - start;
    out.resize(out.size() + 4096);
    stream_.next_out = reinterpret_cast<Bytef*>(out.data() + start + used);
    stream_.avail_out = 4096;
  }
  out.resize(out.size() - stream_.avail_out);
}

InflateStream::InflateStream() : ok_(inflateInit(&stream_) == Z_OK) {}

InflateStream::~InflateStream() {
  if (ok_) inflateEnd(&stream_);
}

std::string InflateStream::broken(int result) const {
  return std::string("not a zlib stream (compression-type = deflate): ") +
         (stream_.msg ? stream_.msg : ("zlib error " + std::to_string(result)).c_str());
}

}  // namespace sluice::avro
