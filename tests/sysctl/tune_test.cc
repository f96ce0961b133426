// sysctl/tune.sh against a fake /proc/sys tree (--root): every mode, without touching the host.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/process.h"

using namespace sluice::test;
using namespace std::chrono_literals;

namespace {

struct FakeKernel {
  TempDir dir;
  std::string path(const std::string& key) const {
    return dir.path() + "/proc/sys/" + std::regex_replace(key, std::regex("\\."), "/");
  }
  void set(const std::string& key, const std::string& value) {
    std::filesystem::create_directories(std::filesystem::path(path(key)).parent_path());
    std::ofstream(path(key)) << value << "\n";
  }
  std::string get(const std::string& key) const {
    std::string v = read_file(path(key));
    return v.substr(0, v.find('\n'));
  }
  int tune(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"/bin/bash", source_path("sysctl/tune.sh")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--root", dir.path()});
    std::remove(dir.file("out").c_str());
    return run(argv, dir.file("out"), 30s);
  }
  std::string out() const { return read_file(dir.file("out")); }
};

// Every key of the profile, at the values a stock kernel might have.
void stock(FakeKernel& k) {
  std::ifstream profile(source_path("sysctl/99-sluice.conf"));
  for (std::string line; std::getline(profile, line);) {
    line = line.substr(0, line.find('#'));
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    k.set(std::regex_replace(line.substr(0, eq), std::regex("\\s+"), ""), "1000");
  }
  k.set("net.ipv4.tcp_rmem", "4096\t131072\t6291456");
  k.set("net.ipv4.tcp_wmem", "4096\t16384\t4194304");
  k.set("net.ipv4.ip_local_port_range", "32768\t60999");
  k.set("net.core.somaxconn", "4096");
}

}  // namespace

TEST_CASE("tune.sh check reports an under-tuned kernel and exits 1", "[sysctl]") {
  FakeKernel k;
  stock(k);
  CHECK(k.tune({"check"}) == 1);
  CHECK_THAT(k.out(),
             Catch::Contains("net.core.rmem_max") && Catch::Contains("UNDER") && Catch::Contains("under-tuned"));
}

TEST_CASE("tune.sh apply sets the profile and check then passes and revert restores every value", "[sysctl]") {
  FakeKernel k;
  stock(k);
  k.set("net.core.netdev_max_backlog", "900000");  // above the profile: left alone
  REQUIRE(k.tune({"apply"}) == 0);
  CHECK(k.get("net.core.rmem_max") == "33554432");
  CHECK(k.get("net.ipv4.tcp_rmem") == "4096 8388608 33554432");
  CHECK(k.get("net.ipv4.ip_local_port_range") == "1024 65535");
  CHECK(k.get("net.core.netdev_max_backlog") == "900000");
  // The profile keeps defaults under the maxima (the field report's were above them).
  CHECK(std::stoll(k.get("net.core.rmem_default")) <= std::stoll(k.get("net.core.rmem_max")));
  CHECK(k.tune({"check"}) == 0);
  CHECK_THAT(k.out(), Catch::Contains("tuned"));
  REQUIRE(k.tune({"revert"}) == 0);
  CHECK(k.get("net.core.rmem_max") == "1000");
  CHECK(k.get("net.ipv4.tcp_rmem") == "4096 131072 6291456");
  CHECK(k.get("net.core.netdev_max_backlog") == "900000");
  CHECK(k.tune({"revert"}) == 1);  // nothing recorded any more
}

TEST_CASE("tune.sh apply --dry-run changes nothing", "[sysctl]") {
  FakeKernel k;
  stock(k);
  REQUIRE(k.tune({"apply", "--dry-run"}) == 0);
  CHECK_THAT(k.out(), Catch::Contains("would set net.core.rmem_max = 33554432"));
  CHECK(k.get("net.core.rmem_max") == "1000");
  CHECK(k.tune({"bogus"}) == 2);
}
