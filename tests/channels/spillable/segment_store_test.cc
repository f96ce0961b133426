// The segment files of the spillable channel: written, released, reopened, torn and corrupted.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "channels/spillable/batch_codec.h"
#include "channels/spillable/crc32c.h"
#include "channels/spillable/segment_store.h"
#include "tests/support/process.h"

using namespace sluice;
using namespace sluice::spill;
using sluice::test::TempDir;
namespace fs = std::filesystem;

namespace {

SegmentStoreConfig config_in(const TempDir& dir, uint64_t max_file_size = 1 << 20) {
  return {dir.path(), dir.path(), max_file_size, FsyncPolicy::never};
}

struct Opened {
  std::unique_ptr<SegmentStore> store;
  RecoveryReport report;
  std::vector<ReplayRecord> replay;
};

Opened open_store(const TempDir& dir, uint64_t max_file_size = 1 << 20) {
  Opened o;
  o.store = std::make_unique<SegmentStore>(config_in(dir, max_file_size), 7, o.report, o.replay);
  return o;
}

std::vector<fs::path> segments(const TempDir& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().extension() == ".sls") found.push_back(e.path());
  std::sort(found.begin(), found.end());
  return found;
}

std::string payload(int i) { return "record " + std::to_string(i) + std::string(100 + i, 'p'); }

}  // namespace

TEST_CASE("segment store replays unreleased records in order after reopening and deletes released segments",
          "[spill]") {
  TempDir dir;
  std::vector<RecordRef> written;
  {
    Opened o = open_store(dir, 1024);  // small segments: several files
    for (int i = 0; i < 40; ++i) written.push_back(o.store->append(payload(i), static_cast<uint32_t>(i + 1)));
    CHECK(segments(dir).size() > 3);
    for (int i = 0; i < 10; ++i) o.store->release(written[static_cast<size_t>(i)]);  // the oldest ten
    o.store->release(written[20]);                                                   // and one in the middle
  }
  Opened o = open_store(dir, 1024);
  CHECK(o.report.records_replayed == 29);
  CHECK(o.report.records_committed >= 1);
  CHECK(o.report.corrupt_tails == 0);
  REQUIRE(o.replay.size() == 29);
  size_t k = 0;
  for (int i = 10; i < 40; ++i) {
    if (i == 20) continue;
    const RecordRef& r = o.replay[k++].record;
    CHECK(r.events == static_cast<uint32_t>(i + 1));
    CHECK(o.store->read(r) == payload(i));
  }
  // Release everything: every segment goes, and a fresh open finds nothing.
  for (const ReplayRecord& r : o.replay) o.store->release(r.record);
  o.store.reset();
  const Opened again = open_store(dir, 1024);
  CHECK(again.replay.empty());
  CHECK(segments(dir).size() <= 1);  // at most the last active one, empty of live records
}

TEST_CASE("a commit log of the first layout is read, rewritten in the new one and removed", "[spill]") {
  TempDir dir;
  std::vector<RecordRef> written;
  {
    Opened o = open_store(dir);
    for (int i = 0; i < 3; ++i) written.push_back(o.store->append(payload(i), 1));
  }
  // What the first build wrote: (segment, offset) per released record, no header.
  fs::remove(fs::path(dir.path()) / "commits.v2.log");
  {
    std::ofstream legacy(fs::path(dir.path()) / "commits.log", std::ios::binary);
    const uint64_t entry[2] = {written[0].segment, written[0].offset};
    legacy.write(reinterpret_cast<const char*>(entry), sizeof entry);
  }
  Opened o = open_store(dir);
  REQUIRE(o.replay.size() == 2);
  CHECK(o.store->read(o.replay[0].record) == payload(1));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "commits.log"));
  CHECK(fs::exists(fs::path(dir.path()) / "commits.v2.log"));
  o.store.reset();
  CHECK(open_store(dir).replay.size() == 2);  // and the new log says the same
}

TEST_CASE("a first-layout commit log newer than the current one (an older build ran since) is the one believed",
          "[spill]") {
  TempDir dir;
  std::vector<RecordRef> written;
  {
    Opened o = open_store(dir);
    for (int i = 0; i < 2; ++i) written.push_back(o.store->append(payload(i), 1));
    o.store->release(written[0]);  // the current log says: record 0 delivered
  }
  // Then an older build delivered record 1 only (it had replayed both) and wrote its own log.
  {
    std::ofstream legacy(fs::path(dir.path()) / "commits.log", std::ios::binary);
    const uint64_t entry[2] = {written[1].segment, written[1].offset};
    legacy.write(reinterpret_cast<const char*>(entry), sizeof entry);
  }
  fs::last_write_time(fs::path(dir.path()) / "commits.log",
                      fs::last_write_time(fs::path(dir.path()) / "commits.v2.log") + std::chrono::seconds(1));
  Opened o = open_store(dir);
  REQUIRE(o.replay.size() == 1);
  CHECK(o.store->read(o.replay[0].record) == payload(0));
}

TEST_CASE("an empty current commit log (torn as it was first written) replays everything and says so", "[spill]") {
  TempDir dir;
  {
    Opened o = open_store(dir);
    o.store->release(o.store->append(payload(0), 1));
    o.store->append(payload(1), 1);
  }
  fs::resize_file(fs::path(dir.path()) / "commits.v2.log", 0);
  Opened o = open_store(dir);
  CHECK(o.replay.size() == 2);  // at least once
  REQUIRE(o.report.problems.size() == 1);
  CHECK_THAT(o.report.problems[0], Catch::Contains("is empty or torn"));
}

TEST_CASE("a torn tail is cut at the last whole record and counted", "[spill]") {
  TempDir dir;
  {
    Opened o = open_store(dir);
    for (int i = 0; i < 5; ++i) o.store->append(payload(i), 1);
  }
  const fs::path segment = segments(dir).at(0);
  const auto size = fs::file_size(segment);
  fs::resize_file(segment, size - 7);  // a crash in the middle of the last record
  Opened o = open_store(dir);
  CHECK(o.replay.size() == 4);
  CHECK(o.report.corrupt_tails == 1);
  CHECK(o.report.corrupt_bytes == payload(4).size() + SegmentStore::kRecordHeader - 7);
  REQUIRE(o.report.problems.size() == 1);
  CHECK_THAT(o.report.problems[0], Catch::Contains("torn record"));
  CHECK(o.store->read(o.replay.back().record) == payload(3));
  // The cut is permanent: appending and reopening again is clean.
  o.store->append(payload(9), 1);
  o.store.reset();
  const Opened again = open_store(dir);
  CHECK(again.report.corrupt_tails == 0);
  CHECK(again.replay.size() == 5);
}

TEST_CASE("a corrupt byte fails the CRC and the segment is cut there", "[spill]") {
  TempDir dir;
  std::vector<RecordRef> written;
  {
    Opened o = open_store(dir);
    for (int i = 0; i < 5; ++i) written.push_back(o.store->append(payload(i), 1));
  }
  const fs::path segment = segments(dir).at(0);
  {
    std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(written[2].offset + SegmentStore::kRecordHeader + 5));
    f.put('X');
  }
  Opened o = open_store(dir);
  CHECK(o.replay.size() == 2);
  CHECK(o.report.corrupt_tails == 1);
  CHECK_THAT(o.report.problems.at(0), Catch::Contains("CRC mismatch at offset " + std::to_string(written[2].offset)));
}

TEST_CASE("two stores cannot open the same directory", "[spill]") {
  TempDir dir;
  Opened first = open_store(dir);
  RecoveryReport report;
  std::vector<ReplayRecord> replay;
  CHECK_THROWS_WITH(SegmentStore(config_in(dir), 7, report, replay),
                    Catch::Contains("is in use by another agent (pid " + std::to_string(::getpid()) + ","));
  first.store.reset();
  CHECK_NOTHROW(SegmentStore(config_in(dir), 7, report, replay));
}

TEST_CASE("a segment written with another event layout is refused not misread", "[spill]") {
  TempDir dir;
  { open_store(dir).store->append("x", 1); }
  RecoveryReport report;
  std::vector<ReplayRecord> replay;
  CHECK_THROWS_WITH(SegmentStore(config_in(dir), 8, report, replay), Catch::Contains("another event layout"));
}
