#pragma once
// What the segment store's files are made of, shared by its two halves (segment_store.cc: the
// segments; segment_commit_log.cc: the commit log): their magic words and sizes, and whole reads
// and writes at an offset.

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "channels/spillable/segment_store.h"

namespace sluice::spill::segment_files {

constexpr char kSegmentMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'S', 'G'};
constexpr size_t kSegmentHeader = 16;
constexpr uint32_t kRecordMagic = 0x43455253;  // "SREC"
constexpr uint32_t kMaxPayload = 1u << 30;
// A new name for the new layout: an older build, which reads only commits.log, must not
// mistake a part of a record for the whole of it (it would skip events never delivered).
constexpr const char* kLogName = "commits.v2.log";
constexpr const char* kLegacyLogName = "commits.log";
constexpr char kLogMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'C', 'L'};
constexpr uint32_t kLogVersion = 2;
constexpr uint64_t kLogHeader = 16;
constexpr uint64_t kLogEntry = 24;        // segment, offset, first event, events (0: whole)
constexpr uint64_t kLegacyLogEntry = 16;  // segment, offset: the whole record

[[noreturn]] inline void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

inline void write_all(int fd, const void* data, size_t length, uint64_t offset, const std::filesystem::path& path) {
  const char* p = static_cast<const char*>(data);
  while (length > 0) {
    const ssize_t n = ::pwrite(fd, p, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", path);
    p += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

inline bool read_all(int fd, void* data, size_t length, uint64_t offset) {
  char* p = static_cast<char*>(data);
  while (length > 0) {
    const ssize_t n = ::pread(fd, p, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// A commit log entry's third word: first event (low half), events (high half).
inline uint64_t packed(EventRange part) { return part.first | static_cast<uint64_t>(part.count) << 32; }

}  // namespace sluice::spill::segment_files
