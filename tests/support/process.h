#pragma once
// Child processes for end-to-end tests: started by PID, waited for with a deadline, and
// ended only by PID (never by name). A ChildProcess that goes out of scope still running is
// killed, so a failing test cannot leave a broker or agent behind.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::test {

std::string bin(const std::string& program);           // build/bin/<program>
std::string source_path(const std::string& relative);  // <project root>/<relative>
// The agent whose memory a test measures: this build's, unless it is built with a sanitizer (whose
// shadow memory, redzones and quarantine of freed memory are not the agent's); then the release
// build's beside it (.ci/run builds build/ first), or "" when there is none.
std::string measured_agent();
inline constexpr const char* kNoMeasuredAgent =
    "this build has a sanitizer; its RSS is not the agent's: build the release build into build/ first (bash .ci/build)";

// A fresh directory under the system temp dir, removed with its files at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

class ChildProcess {
 public:
  // stdout and stderr both go to output_file. With own_group the child leads a process group of
  // its own, so that what it starts can be ended with it (signal_group).
  ChildProcess(std::vector<std::string> argv, const std::string& output_file, bool own_group = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig);
  void signal_group(int sig);  // the child and what it started (own_group)
  // The exit code (128+N for a signal), or nullopt if still running at the deadline.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs to completion (bounded by timeout) and returns the exit code; past the timeout the
// program and everything it started in its process group (a script's tools, a broker it was
// starting) are killed, and it returns -1.
int run(std::vector<std::string> argv, const std::string& output_file, std::chrono::milliseconds timeout);

std::string read_file(const std::string& path);
// Polls until the file exists and is non-empty, or the deadline; returns its text or "".
std::string wait_for_file(const std::string& path, std::chrono::milliseconds timeout);
// A TCP connection to 127.0.0.1:port (blocking); throws std::runtime_error if it fails.
int connect_loopback(uint16_t port);
// The same from a local address of our choice, e.g. "127.0.0.9" (all of 127/8 is this host's).
int connect_from(const std::string& local, uint16_t port);
// True if the other end closed the connection (or reset it) within the timeout.
bool closed_by_peer(int fd, std::chrono::milliseconds timeout);
// GET http://127.0.0.1:port/path; returns the body, or "" if the request failed.
std::string http_get(int port, const std::string& path);
// The sum of every sample of a Prometheus metric in `text` (all label sets), or of the one
// sample whose labels are given with the name: metric{sink="k1",reason="purged"}.
double prometheus_sum(const std::string& text, const std::string& name);
// The largest of those samples (0 if none).
double prometheus_max(const std::string& text, const std::string& name);

// Loopback TCP ports nobody listens on now, for a program that must be told its port before it
// starts (HAProxy) or that must find its port again after a restart. Taken below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), so that no outgoing connection (a sender's, a
// Kafka client's) takes one meanwhile, as it may take a number port 0 gave and a close let go;
// when the range starts too low for that (sysctl/99-sluice.conf's 1024), any free port. They
// differ from each other.
std::vector<uint16_t> free_ports(size_t count);

// From "key=value" lines.
std::string value_of(const std::string& text, const std::string& key);

}  // namespace sluice::test
