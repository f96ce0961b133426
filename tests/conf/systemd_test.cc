// The systemd units verify, and the agent speaks systemd's notify protocol (Type=notify).

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "tests/support/process.h"

using namespace sluice::test;
using namespace std::chrono_literals;

TEST_CASE("systemd-analyze verify accepts sluice.service and an instance of sluice@.service", "[systemd]") {
  TempDir dir;
  for (const auto& [unit, as] :
       {std::pair{"sluice.service", "sluice.service"}, std::pair{"sluice@.service", "sluice@tier1.service"}}) {
    // The installed paths, pointed at this build so that verify finds the executables.
    std::string text = read_file(source_path(std::string("conf/") + unit));
    CHECK_THAT(text, Catch::Contains("\nExecReload=/bin/kill -HUP $MAINPID\n"));  // systemctl reload
    text = std::regex_replace(text, std::regex("/usr/bin/sluice"), bin("sluice"));
    text = std::regex_replace(text, std::regex("/usr/lib/sluice/tune.sh"), source_path("sysctl/tune.sh"));
    std::ofstream(dir.file(as)) << text;
    INFO(unit);
    CHECK(run({"/usr/bin/systemd-analyze", "verify", "--man=no", dir.file(as)}, dir.file("verify.log"), 60s) == 0);
    INFO(read_file(dir.file("verify.log")));
    CHECK(read_file(dir.file("verify.log")).empty());
  }
}

TEST_CASE("the agent tells systemd READY, feeds the watchdog, RELOADING then READY on SIGHUP, and STOPPING on SIGTERM",
          "[systemd]") {
  TempDir dir;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir.file("notify");
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval timeout{0, 200'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);

  std::ofstream(dir.file("a.properties"))
      << "a.sources = s\na.channels = c\na.sinks = k\n"
         "a.sources.s.type = multiport_syslogtcp\na.sources.s.host = 127.0.0.1\n"
         "a.sources.s.ports = 0\na.sources.s.channels = c\n"
         "a.channels.c.type = memory\na.sinks.k.type = null\na.sinks.k.channel = c\n";
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ::setenv("WATCHDOG_USEC", "400000", 1);
  ChildProcess agent({bin("sluice"), "-f", dir.file("a.properties"), "-n", "a"}, dir.file("agent.log"));
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");

  std::string received;
  auto receive_until = [&](const std::string& wanted) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (received.find(wanted) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      char buffer[512];
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n > 0) received.append(buffer, static_cast<size_t>(n)).append("\n");
    }
    return received.find(wanted) != std::string::npos;
  };
  CHECK(receive_until("READY=1"));
  CHECK(receive_until("WATCHDOG=1"));
  // systemctl reload: RELOADING=1 (with the monotonic time), then READY=1 once applied.
  received.clear();
  agent.signal(SIGHUP);
  CHECK(receive_until("RELOADING=1\nMONOTONIC_USEC="));
  CHECK(receive_until("READY=1"));
  CHECK(received.find("RELOADING=1") < received.find("READY=1"));
  agent.signal(SIGTERM);
  CHECK(receive_until("STOPPING=1"));
  CHECK(agent.wait(30s) == std::optional<int>(0));
  ::close(fd);
}
