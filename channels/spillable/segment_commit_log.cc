// The segment store's commit log (commits.v2.log): which records, and which parts of records, a
// sink has committed. Read at a start (with the first layout's commits.log), appended to at each
// commit, and rewritten without what deleted segments held. The segments themselves are in
// segment_store.cc.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "channels/spillable/segment_files.h"
#include "channels/spillable/segment_store.h"

namespace sluice::spill {

using namespace segment_files;

SegmentStore::CommitLogContents SegmentStore::read_commit_log(RecoveryReport& report) {
  CommitLogContents committed;
  // The current log; or the first layout's, when it is the only one, or newer (a build that
  // knows only that one ran here since: what it wrote is the truth, the other is stale). The
  // rewrite at open then replaces it.
  namespace fs = std::filesystem;
  const fs::path current = config_.checkpoint_dir / kLogName, legacy = config_.checkpoint_dir / kLegacyLogName;
  std::error_code ec;
  const bool has_current = fs::exists(current, ec), has_legacy = fs::exists(legacy, ec);
  const bool use_legacy =
      has_legacy && (!has_current || fs::last_write_time(legacy, ec) > fs::last_write_time(current, ec));
  const fs::path path = use_legacy ? legacy : current;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return committed;
  const off_t end = ::lseek(fd, 0, SEEK_END);
  char header[kLogHeader];
  const bool has_header = end >= static_cast<off_t>(kLogHeader) && read_all(fd, header, kLogHeader, 0) &&
                          std::memcmp(header, kLogMagic, sizeof kLogMagic) == 0;
  if (!use_legacy && !has_header) {
    if (end >= static_cast<off_t>(kLogHeader)) {
      ::close(fd);
      throw std::runtime_error(path.string() +
                               " is not a Sluice commit log: move it away (every record on disk is "
                               "then delivered again)");
    }
    // Cut short while it was first written (a power loss with fsync = never): it said nothing.
    report.problems.push_back(path.string() + " is empty or torn (" + std::to_string(end) +
                              " bytes): every record "
                              "on disk is delivered again, some perhaps twice");
    ::close(fd);
    return committed;
  }
  if (has_header) {
    uint32_t version = 0;
    std::memcpy(&version, header + 8, 4);
    if (version != kLogVersion) {
      ::close(fd);
      throw std::runtime_error(path.string() + " is a commit log of version " + std::to_string(version) +
                               " (this build reads " + std::to_string(kLogVersion) +
                               "): deliver it with the build "
                               "that wrote it");
    }
  }
  // A torn last entry (a crash mid-write) is shorter than an entry and ignored: its record,
  // or part, is replayed, at worst once more.
  const uint64_t size = has_header ? kLogEntry : kLegacyLogEntry;
  for (uint64_t at = has_header ? kLogHeader : 0;; at += size) {
    uint64_t entry[3] = {};
    if (!read_all(fd, entry, size, at)) break;
    // First-layout entries: the whole record (the third word stays 0).
    const EventRange part{static_cast<uint32_t>(entry[2]), static_cast<uint32_t>(entry[2] >> 32)};
    committed[entry[0]][entry[1]].push_back(part);
  }
  ::close(fd);
  return committed;
}

bool SegmentStore::log_commit(uint64_t segment, const LogEntry& entry) {
  if (log_fd_ < 0) return false;
  const uint64_t bytes[3] = {segment, entry.offset, packed(entry.part)};
  try {
    write_all(log_fd_, bytes, kLogEntry, kLogHeader + log_entries_ * kLogEntry, config_.checkpoint_dir / kLogName);
  } catch (const std::runtime_error& e) {
    // The next entry overwrites whatever part of this one reached the file.
    write_error(std::string(e.what()) + "; the record may be delivered again after a restart");
    return false;
  }
  ++log_entries_;
  bytes_on_disk_ += kLogEntry;
  if (config_.fsync == FsyncPolicy::every_batch) {
    if (::fdatasync(log_fd_) != 0) write_error(std::string("cannot fsync the commit log: ") + std::strerror(errno));
  } else {
    log_dirty_ = true;
  }
  return true;
}

void SegmentStore::rewrite_commit_log() {
  const auto path = config_.checkpoint_dir / kLogName;
  const auto fresh = config_.checkpoint_dir / (std::string(kLogName) + ".new");
  const int fd = ::open(fresh.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", fresh);
  std::string bytes(kLogHeader, '\0');
  std::memcpy(bytes.data(), kLogMagic, sizeof kLogMagic);
  std::memcpy(bytes.data() + 8, &kLogVersion, 4);
  uint64_t entries = 0;
  for (const auto& [id, s] : segments_)
    for (const LogEntry& e : s.log) {
      const uint64_t entry[3] = {id, e.offset, packed(e.part)};
      bytes.append(reinterpret_cast<const char*>(entry), kLogEntry);
      ++entries;
    }
  try {
    write_all(fd, bytes.data(), bytes.size(), 0, fresh);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (config_.fsync != FsyncPolicy::never) ::fdatasync(fd);
  if (::rename(fresh.c_str(), path.c_str()) != 0) {
    ::close(fd);
    fail("cannot rename", fresh);
  }
  if (log_fd_ >= 0) {
    ::close(log_fd_);
    bytes_on_disk_ -= kLogHeader + log_entries_ * kLogEntry;
  }
  log_fd_ = fd;
  log_entries_ = entries;
  bytes_on_disk_ += bytes.size();
  log_dirty_ = false;
  // The first layout's log, once its entries are in this one, goes: a build that reads only
  // it then finds none, and replays (duplicates) rather than skips (loses).
  std::error_code ignored;
  std::filesystem::remove(config_.checkpoint_dir / kLegacyLogName, ignored);
  if (config_.fsync != FsyncPolicy::never) sync_directory();
}

}  // namespace sluice::spill
