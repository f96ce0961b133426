#pragma once
// compression-type = deflate, as Flume's Avro source and sink put it on a connection (Netty's
// ZlibEncoder and ZlibDecoder): each direction one zlib stream (RFC 1950: the zlib wrapper around
// deflate) for the connection's life, every write flushed (Z_SYNC_FLUSH) so that the peer can read
// it whole at once. Frames (avro_ipc.h) travel inside it.

#include <zlib.h>

#include <string>
#include <string_view>

namespace sluice::avro {

// What we send: compressed as it is written.
class DeflateStream {
 public:
  // `level`: zlib's 0 (none) to 9 (best); Flume's default is 6. If zlib cannot have its state
  // (no memory), ok() is false and nothing may be compressed.
  explicit DeflateStream(int level);
  bool ok() const { return ok_; }
  ~DeflateStream();
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
  // Appends `data` compressed and flushed to `out`.
  void compress(std::string_view data, std::string& out);

 private:
  void compress_piece(std::string_view data, std::string& out);  // at most 1 GiB: zlib counts in uInt
  z_stream stream_{};
  bool ok_ = false;
};

// What we receive: decompressed in pieces, so that a small read that inflates to a great deal
// (a zip bomb) is never held whole.
class InflateStream {
 public:
  InflateStream();  // ok() false if zlib cannot have its state (no memory)
  ~InflateStream();
  bool ok() const { return ok_; }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  // Decompresses `data`, handing what it yields to `take` in pieces of at most `piece` bytes
  // (take returns false to stop: the rest is not read). Returns "" or why the stream is not
  // zlib's (it cannot be read on).
  template <class Take>
  std::string inflate(std::string_view data, size_t piece, Take take) {
    if (!ok_) return "zlib could not allocate its state";
    if (data.size() > (1u << 30)) return "a read of over 1 GiB";  // zlib counts in uInt; reads are far smaller
    out_.resize(piece);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream_.avail_in = static_cast<uInt>(data.size());
    while (true) {
      stream_.next_out = reinterpret_cast<Bytef*>(out_.data());
      stream_.avail_out = static_cast<uInt>(out_.size());
      const int result = ::inflate(&stream_, Z_SYNC_FLUSH);
      const size_t produced = out_.size() - stream_.avail_out;
      if (result != Z_OK && result != Z_BUF_ERROR && result != Z_STREAM_END) return broken(result);
      if (produced && !take(std::string_view(out_.data(), produced))) return {};
      if (result == Z_STREAM_END && stream_.avail_in) return "bytes after the end of the compressed stream";
      if (produced == 0 || (stream_.avail_in == 0 && stream_.avail_out != 0)) return {};
    }
  }

 private:
  std::string broken(int result) const;
  z_stream stream_{};
  bool ok_ = false;
  std::string out_;
};

}  // namespace sluice::avro
