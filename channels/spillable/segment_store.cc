#include "channels/spillable/segment_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "channels/spillable/crc32c.h"
#include "channels/spillable/segment_files.h"

namespace sluice::spill {
namespace {

using namespace segment_files;

uint32_t record_crc(uint32_t events, std::string_view payload) {
  return crc32c(payload.data(), payload.size(), crc32c(&events, sizeof events));
}

// "segment-<16 hex digits>.sls" -> id, else 0.
uint64_t segment_id(const std::string& name) {
  if (name.size() != 8 + 16 + 4 || name.rfind("segment-", 0) != 0 || name.substr(24) != ".sls") return 0;
  uint64_t id = 0;
  for (char c : name.substr(8, 16)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return 0;
    id = id * 16 + static_cast<uint64_t>(digit);
  }
  return id;
}

}  // namespace

SegmentStore::SegmentStore(SegmentStoreConfig config, uint32_t layout_version, RecoveryReport& report,
                           std::vector<ReplayRecord>& replay)
    : config_(std::move(config)), layout_version_(layout_version) {
  std::error_code ec;
  for (const auto& dir : {config_.data_dir, config_.checkpoint_dir}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  }
  lock_directory();
  const auto committed = read_commit_log(report);
  std::vector<uint64_t> ids;
  for (const auto& entry : std::filesystem::directory_iterator(config_.data_dir))
    if (const uint64_t id = segment_id(entry.path().filename().string())) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint64_t id : ids) recover(id, committed, report, replay);
  report.segments = ids.size();
  if (!ids.empty()) next_id_ = ids.back() + 1;
  rewrite_commit_log();  // only the entries of segments still here
}

SegmentStore::~SegmentStore() {
  if (config_.fsync != FsyncPolicy::never) sync();
  std::lock_guard lock(mutex_);
  for (auto& [id, s] : segments_) ::close(s.fd);
  if (log_fd_ >= 0) ::close(log_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

std::filesystem::path SegmentStore::segment_path(uint64_t id) const {
  char name[32];
  std::snprintf(name, sizeof name, "segment-%016llx.sls", static_cast<unsigned long long>(id));
  return config_.data_dir / name;
}

void SegmentStore::lock_directory() {
  const auto path = config_.checkpoint_dir / "lock";
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail("cannot open", path);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    [[maybe_unused]] const ssize_t n = ::pread(lock_fd_, pid, sizeof pid - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    std::string holder(pid);
    holder.erase(std::remove(holder.begin(), holder.end(), '\n'), holder.end());
    throw std::runtime_error(config_.checkpoint_dir.string() + " is in use by another agent (pid " +
                             (holder.empty() ? "unknown" : holder) + ", lock " + path.string() + ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) == 0) write_all(lock_fd_, pid.data(), pid.size(), 0, path);
}

void SegmentStore::recover(uint64_t id, const CommitLogContents& committed, RecoveryReport& report,
                           std::vector<ReplayRecord>& replay) {
  const auto path = segment_path(id);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) fail("cannot open", path);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  const uint64_t file_size = end > 0 ? static_cast<uint64_t>(end) : 0;
  char header[kSegmentHeader];
  if (file_size < kSegmentHeader || !read_all(fd, header, kSegmentHeader, 0) ||
      std::memcmp(header, kSegmentMagic, sizeof kSegmentMagic) != 0) {
    // Torn while being created (or not ours): nothing in it can be read.
    ++report.corrupt_tails;
    report.corrupt_bytes += file_size;
    report.problems.push_back(path.string() + ": no valid segment header; " + std::to_string(file_size) +
                              " bytes removed");
    ::close(fd);
    std::filesystem::remove(path);
    return;
  }
  uint32_t layout;
  std::memcpy(&layout, header + 8, 4);
  if (layout != layout_version_) {
    ::close(fd);
    throw std::runtime_error(path.string() + " was written by a build with another event layout (" +
                             std::to_string(layout) + ", this one " + std::to_string(layout_version_) +
                             "): deliver it with that build, or move it away");
  }
  Segment segment{fd, file_size, 0, 0, {}, 0, false};
  const auto done = committed.find(id);
  // The parts of the record at `offset` already committed, merged and sorted; one range of
  // every event when it is all done.
  auto committed_parts = [&](uint64_t offset, uint32_t events) {
    std::vector<EventRange> parts;
    if (done == committed.end()) return parts;
    const auto it = done->second.find(offset);
    if (it == done->second.end()) return parts;
    for (EventRange part : it->second) {
      if (part.count == 0) return std::vector<EventRange>{{0, events}};
      if (part.first < events) parts.push_back({part.first, std::min(part.count, events - part.first)});
    }
    std::sort(parts.begin(), parts.end(), [](EventRange a, EventRange b) { return a.first < b.first; });
    std::vector<EventRange> merged;
    for (EventRange part : parts) {
      if (!merged.empty() && part.first <= merged.back().first + merged.back().count) {
        const uint32_t end = std::max(merged.back().first + merged.back().count, part.first + part.count);
        merged.back().count = end - merged.back().first;
      } else {
        merged.push_back(part);
      }
    }
    return merged;
  };
  uint64_t at = kSegmentHeader;
  std::string payload;
  while (at < file_size) {
    uint32_t h[4];  // magic, length, events, crc
    const char* problem = nullptr;
    if (file_size - at < kRecordHeader || !read_all(fd, h, kRecordHeader, at))
      problem = "torn record header";
    else if (h[0] != kRecordMagic || h[1] > kMaxPayload)
      problem = "bad record header";
    else if (file_size - at - kRecordHeader < h[1])
      problem = "torn record";
    if (!problem) {
      payload.resize(h[1]);
      if (!read_all(fd, payload.data(), h[1], at + kRecordHeader) || record_crc(h[2], payload) != h[3])
        problem = "CRC mismatch";
    }
    if (problem) {
      ++report.corrupt_tails;
      report.corrupt_bytes += file_size - at;
      report.problems.push_back(path.string() + ": " + problem + " at offset " + std::to_string(at) + "; cut " +
                                std::to_string(file_size - at) + " bytes there");
      if (::ftruncate(fd, static_cast<off_t>(at)) != 0) fail("cannot truncate", path);
      segment.size = at;
      break;
    }
    const RecordRef record{id, at, static_cast<uint32_t>(kRecordHeader + h[1]), h[2]};
    ++segment.records;
    std::vector<EventRange> parts = committed_parts(at, h[2]);
    if (parts.size() == 1 && parts[0] == EventRange{0, h[2]}) {
      ++segment.released;
      segment.log.push_back({at, {}});
      ++report.records_committed;
    } else {
      uint32_t delivered = 0;
      for (EventRange part : parts) {
        segment.log.push_back({at, part});
        delivered += part.count;
      }
      segment.parts += parts.size();
      replay.push_back({record, std::move(parts)});
      ++report.records_replayed;
      report.events_replayed += h[2] - delivered;
    }
    at += record.stored;
  }
  bytes_on_disk_ += segment.size;
  segments_.emplace(id, std::move(segment));
  if (segments_[id].released == segments_[id].records) delete_segment(id);
}

void SegmentStore::open_new_segment() {
  const uint64_t id = next_id_++;
  const auto path = segment_path(id);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", path);
  char header[kSegmentHeader] = {};
  std::memcpy(header, kSegmentMagic, sizeof kSegmentMagic);
  std::memcpy(header + 8, &layout_version_, 4);
  write_all(fd, header, sizeof header, 0, path);
  segments_.emplace(id, Segment{fd, kSegmentHeader, 0, 0, {}, 0, true});
  bytes_on_disk_ += kSegmentHeader;
  active_ = id;
  // The new file's name must survive a power loss too, or its records would vanish with it.
  if (config_.fsync != FsyncPolicy::never) sync_directory();
}

RecordRef SegmentStore::append(std::string_view payload, uint32_t events) {
  std::lock_guard lock(mutex_);
  const uint64_t stored = kRecordHeader + payload.size();
  if (active_ != 0) {
    Segment& current = segments_.at(active_);
    if (current.records > 0 && current.size + stored > config_.max_file_size) {
      if (config_.fsync != FsyncPolicy::never) ::fdatasync(current.fd);
      current.dirty = false;
      const uint64_t full = active_;
      active_ = 0;
      if (current.released == current.records) delete_segment(full);
    }
  }
  if (active_ == 0) open_new_segment();
  Segment& s = segments_.at(active_);
  const uint32_t header[4] = {kRecordMagic, static_cast<uint32_t>(payload.size()), events, record_crc(events, payload)};
  // Header and payload in one write: a crash leaves either a whole record or a torn tail.
  std::string bytes(reinterpret_cast<const char*>(header), kRecordHeader);
  bytes.append(payload);
  write_all(s.fd, bytes.data(), bytes.size(), s.size, segment_path(active_));
  const RecordRef record{active_, s.size, static_cast<uint32_t>(stored), events};
  s.size += stored;
  ++s.records;
  bytes_on_disk_ += stored;
  if (config_.fsync == FsyncPolicy::every_batch)
    ::fdatasync(s.fd);
  else
    s.dirty = true;
  return record;
}

std::optional<std::string> SegmentStore::read(const RecordRef& record) const {
  int fd;
  {
    // The file stays open while the record is unreleased: the descriptor outlives the lock.
    std::lock_guard lock(mutex_);
    const auto it = segments_.find(record.segment);
    if (it == segments_.end()) return std::nullopt;
    fd = it->second.fd;
  }
  uint32_t h[4];
  if (!read_all(fd, h, kRecordHeader, record.offset) || h[0] != kRecordMagic || h[1] != record.stored - kRecordHeader)
    return std::nullopt;
  std::string payload(h[1], '\0');
  if (!read_all(fd, payload.data(), h[1], record.offset + kRecordHeader) || record_crc(h[2], payload) != h[3])
    return std::nullopt;
  return payload;
}

void SegmentStore::release(const RecordRef& record) {
  std::lock_guard lock(mutex_);
  const auto it = segments_.find(record.segment);
  if (it == segments_.end()) return;
  Segment& s = it->second;
  ++s.released;
  if (s.parts)  // the whole covers its parts
    s.parts -= std::erase_if(s.log, [&](const LogEntry& e) { return e.offset == record.offset; });
  s.log.push_back({record.offset, {}});
  log_commit(record.segment, s.log.back());
  // Everything in it delivered: the space goes back at once. The segment being written stays
  // until it is full (deleting and re-creating it would cost a file and a directory sync per
  // batch when the sinks keep up).
  if (s.released == s.records && record.segment != active_) {
    delete_segment(record.segment);
    // The log keeps entries of deleted segments until it is rewritten; do so when they are
    // most of it.
    uint64_t live = 0;
    for (const auto& [id, seg] : segments_) live += seg.log.size();
    if (log_entries_ > 4096 && live * 2 < log_entries_) {
      try {
        rewrite_commit_log();
      } catch (const std::runtime_error& e) {
        write_error(e.what());  // the old log stays, and stays right
      }
    }
  }
}

void SegmentStore::release_part(const RecordRef& record, EventRange part) {
  std::lock_guard lock(mutex_);
  const auto it = segments_.find(record.segment);
  if (it == segments_.end()) return;
  it->second.log.push_back({record.offset, part});
  ++it->second.parts;
  log_commit(record.segment, it->second.log.back());
}

void SegmentStore::write_error(const std::string& what) {
  const uint64_t errors = write_errors_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (auto note = write_error_log_.next())
    spdlog::error("spill store {}: {} ({} write errors so far){}", config_.data_dir.string(), what, errors, *note);
}

void SegmentStore::delete_segment(uint64_t id) {
  const auto it = segments_.find(id);
  if (it == segments_.end()) return;
  ::close(it->second.fd);
  bytes_on_disk_ -= it->second.size;
  segments_.erase(it);
  std::error_code ec;
  std::filesystem::remove(segment_path(id), ec);
}

void SegmentStore::sync() {
  std::lock_guard lock(mutex_);
  for (auto& [id, s] : segments_) {
    if (!s.dirty) continue;
    if (::fdatasync(s.fd) != 0) write_error("cannot fsync " + segment_path(id).string() + ": " + std::strerror(errno));
    s.dirty = false;
  }
  if (log_dirty_ && log_fd_ >= 0) {
    if (::fdatasync(log_fd_) != 0) write_error(std::string("cannot fsync the commit log: ") + std::strerror(errno));
    log_dirty_ = false;
  }
}

void SegmentStore::sync_directory() const {
  for (const auto& dir : {config_.data_dir, config_.checkpoint_dir}) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fsync(fd);
    ::close(fd);
  }
}

uint64_t SegmentStore::free_space() const {
  struct statvfs s {};
  if (::statvfs(config_.data_dir.c_str(), &s) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace sluice::spill
