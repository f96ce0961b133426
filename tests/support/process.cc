#include "tests/support/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/eventually.h"

extern char** environ;

namespace sluice::test {

std::string bin(const std::string& program) { return std::string(SLUICE_BIN_DIR) + "/" + program; }
std::string source_path(const std::string& relative) { return std::string(SLUICE_SOURCE_DIR) + "/" + relative; }

std::string measured_agent() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const std::string release = source_path("build/bin/sluice");
  return ::access(release.c_str(), X_OK) == 0 ? release : "";
#else
  return bin("sluice");
#endif
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::string& output_file, bool own_group) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The tests ignore SIGPIPE (support/main.cc); their children get the default back.
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  short flags = POSIX_SPAWN_SETSIGDEF;
  if (own_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  posix_spawnattr_setflags(&attributes, flags);
  const int rc = posix_spawn(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

void ChildProcess::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

void ChildProcess::signal_group(int sig) {
  if (pid_ > 0) ::kill(-pid_, sig);  // the group outlives its leader: signalled even if it exited
}

bool ChildProcess::running() {
  if (status_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return r == 0;
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (!eventually([&] { return !running(); }, timeout, std::chrono::milliseconds(20))) return std::nullopt;
  return status_;
}

int run(std::vector<std::string> argv, const std::string& output_file, std::chrono::milliseconds timeout) {
  ChildProcess child(std::move(argv), output_file, /*own_group=*/true);
  if (auto code = child.wait(timeout)) return *code;
  child.signal_group(SIGKILL);
  child.wait(std::chrono::seconds(10));
  return -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string wait_for_file(const std::string& path, std::chrono::milliseconds timeout) {
  std::string text;
  eventually([&] { return !(text = read_file(path)).empty(); }, timeout, std::chrono::milliseconds(20));
  return text;
}

int connect_loopback(uint16_t port) { return connect_from("", port); }

int connect_from(const std::string& local, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 ||
      (!local.empty() && (::inet_pton(AF_INET, local.c_str(), &from.sin_addr) != 1 ||
                          ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)) ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port) +
                             (local.empty() ? "" : " from " + local) + ": " + why);
  }
  return fd;
}

std::string http_get(int port, const std::string& path) {
  int fd;
  try {
    fd = connect_loopback(static_cast<uint16_t>(port));
  } catch (const std::runtime_error&) {
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

std::string value_of(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char byte;
  return ::recv(fd, &byte, 1, 0) <= 0;
}

namespace {

// Every sample of `name` in `text` (see prometheus_sum).
std::vector<double> prometheus_samples(const std::string& text, const std::string& name) {
  // `name` may carry its labels, exactly as the endpoint writes them: metric{a="x",b="y"}.
  const size_t brace = name.find('{');
  const std::string metric = name.substr(0, brace), labels = brace == std::string::npos ? "" : name.substr(brace);
  std::vector<double> samples;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric, 0) != 0 || line.size() <= metric.size()) continue;
    const std::string rest = line.substr(metric.size());
    const size_t space = rest.rfind(' ');
    if (space == std::string::npos || (rest[0] != '{' && rest[0] != ' ')) continue;  // another metric's name
    if (!labels.empty() && rest.substr(0, space) != labels) continue;
    samples.push_back(std::stod(rest.substr(space + 1)));
  }
  return samples;
}

}  // namespace

double prometheus_sum(const std::string& text, const std::string& name) {
  double sum = 0;
  for (double sample : prometheus_samples(text, name)) sum += sample;
  return sum;
}

double prometheus_max(const std::string& text, const std::string& name) {
  double max = 0;
  for (double sample : prometheus_samples(text, name)) max = std::max(max, sample);
  return max;
}

std::vector<uint16_t> free_ports(size_t count) {
  int low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low;
  std::mt19937 random(std::random_device{}());
  // Held open until all are found, so that they differ.
  std::vector<int> held;
  std::vector<uint16_t> ports;
  for (int tries = 0; ports.size() < count; ++tries) {
    if (tries > 10000) throw std::runtime_error("no free loopback port found");
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (low > 10000)
      address.sin_port = htons(
          static_cast<uint16_t>(std::uniform_int_distribution<int>(std::max(1024, low - 12000), low - 1)(random)));
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ::close(fd);
      continue;
    }
    held.push_back(fd);
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : held) ::close(fd);
  return ports;
}

}  // namespace sluice::test
