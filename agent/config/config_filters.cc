#include "agent/config/config_filters.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "agent/api/property_values.h"

extern char** environ;

namespace sluice::config {
namespace {

using namespace std::chrono_literals;

constexpr auto kDefaultTimeout = 10s;
constexpr size_t kOutputMax = 64 * 1024;  // a secret is a line, not a file

enum class FilterType { env, external };

struct Filter {
  std::string name;
  FilterType type = FilterType::env;
  std::vector<std::string> command;  // external
  std::chrono::milliseconds timeout = kDefaultTimeout;
  SourceLocation where;  // its type's line
  std::map<std::string, std::string> resolved;
};

// SIGTERM or SIGINT waits for the agent (which blocks them and takes them with sigtimedwait).
bool stop_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

// A command started, its stdout and stderr read through pipes.
struct Spawned {
  pid_t pid;
  int out, err;  // the read ends
};

// Starts `argv` without a shell, its stdin empty; throws when it cannot start.
Spawned spawn(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The agent blocks SIGINT/SIGTERM/SIGHUP and ignores SIGPIPE: the command gets neither, and a
  // process group of its own, so that a timeout ends whatever it started too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(spawned));
  }
  return {pid, out_pipe[0], err_pipe[0]};
}

// Runs `argv` without a shell, its stdin empty; returns its exit status, stdout and stderr (each
// at most kOutputMax), or throws when it cannot start or outlasts `timeout` (then it is killed).
int run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::string& out,
                std::string& err) {
  const auto [pid, out_fd, err_fd] = spawn(argv);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* into[2] = {&out, &err};
  int open_pipes = 2;
  bool timed_out = false, interrupted = false;
  int status = 0;
  bool exited = false;
  while (open_pipes > 0) {
    // Once it has exited, what it wrote is in the pipes: read that, then stop, even if something
    // it started still holds them open.
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    // The agent asked to stop (a reload waiting for a command must not hold a SIGTERM for the
    // command's whole timeout): the command is ended, the load fails.
    if (stop_pending()) {
      interrupted = true;
      break;
    }
    const int ready = ::poll(fds, 2, exited ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 50)));
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && exited) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        if (into[i]->size() < kOutputMax)
          into[i]->append(buffer, std::min<size_t>(static_cast<size_t>(n), kOutputMax - into[i]->size()));
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  if (timed_out || interrupted) {
    ::kill(-pid, SIGKILL);  // its process group: ours, started above
    if (!exited) ::waitpid(pid, &status, 0);
    throw std::runtime_error(interrupted ? "was ended: the agent is stopping (SIGTERM or SIGINT)"
                                         : "did not finish within " + std::to_string(timeout.count()) +
                                               " ms (timeout); it was killed");
  }
  // Its output is closed: it has ended, or is about to; wait for it at most the time left.
  while (!exited && ::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw std::runtime_error("did not exit within " + std::to_string(timeout.count()) +
                               " ms (timeout); it was killed");
    }
    ::poll(nullptr, 0, 5);
  }
  ::kill(-pid, SIGKILL);  // anything it left running in its group
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string resolve(Filter& filter, const std::string& key) {
  if (const auto it = filter.resolved.find(key); it != filter.resolved.end()) return it->second;
  std::string value;
  if (filter.type == FilterType::env) {
    const char* found = std::getenv(key.c_str());
    if (!found) throw std::runtime_error("environment variable " + key + " is not set");
    value = found;
  } else {
    std::vector<std::string> argv = filter.command;
    argv.push_back(key);
    std::string out, err;
    const int status = run_command(argv, filter.timeout, out, err);
    if (status != 0)
      throw std::runtime_error("command " + filter.command[0] + " exited with status " + std::to_string(status) +
                               (err.empty() ? std::string() : ": " + first_line(err)));
    if (out.empty()) throw std::runtime_error("command " + filter.command[0] + " printed nothing");
    value = first_line(out);
  }
  filter.resolved[key] = value;
  return value;
}

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// Replaces every ${name[KEY]} of `filter` in `value`.
void substitute(Filter& filter, FlatEntry& entry) {
  const std::string opening = "${" + filter.name + "[";
  size_t pos = 0;
  while ((pos = entry.value.find(opening, pos)) != std::string::npos) {
    size_t at = pos + opening.size();
    const char quote =
        at < entry.value.size() && (entry.value[at] == '\'' || entry.value[at] == '"') ? entry.value[at] : 0;
    if (quote) ++at;
    const size_t key_start = at;
    while (at < entry.value.size() && is_key_char(entry.value[at])) ++at;
    const std::string key = entry.value.substr(key_start, at - key_start);
    const bool closed = !key.empty() && (!quote || (at < entry.value.size() && entry.value[at++] == quote)) &&
                        entry.value.compare(at, 2, "]}") == 0;
    if (!closed)
      throw ConfigError(entry.where.to_string() + ": " + entry.key + ": \"" + entry.value.substr(pos) +
                        "\" is not a config filter reference (${" + filter.name +
                        "['KEY']}, KEY of letters, digits, - and _)");
    // An external filter's command gets the key as its last argument: one starting with '-' would be
    // an option to it.
    if (key.front() == '-')
      throw ConfigError(entry.where.to_string() + ": " + entry.key + ": ${" + filter.name + "['" + key +
                        "']}: a key may not start with '-' (the command would take it for an option)");
    std::string replacement;
    try {
      replacement = resolve(filter, key);
    } catch (const std::exception& e) {
      throw ConfigError(entry.where.to_string() + ": " + entry.key + ": ${" + filter.name + "['" + key +
                        "']}: " + e.what());
    }
    entry.value.replace(pos, at + 2 - pos, replacement);
    pos += replacement.size();
  }
}

std::optional<FilterType> filter_type(const std::string& type) {
  std::string lower = type;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "env" || lower == "org.apache.flume.configfilter.environmentvariableconfigfilter")
    return FilterType::env;
  if (lower == "external" || lower == "org.apache.flume.configfilter.externalprocessconfigfilter")
    return FilterType::external;
  return std::nullopt;
}

// The filters `agent` declares, from its configfilters keys (which are removed from `flat`).
std::vector<Filter> take_filters(FlatConfig& flat, const std::string& agent, const FlatEntry& list) {
  std::vector<Filter> filters;
  const std::string prefix = agent + ".configfilters.";
  for (const std::string& name : parse_word_list(list.value)) {
    Filter filter{.name = name, .where = list.where};
    std::optional<std::string> type, command, charset, timeout;
    const std::string own = prefix + name + ".";
    for (const FlatEntry& e : flat) {
      if (!e.key.starts_with(own)) continue;
      const std::string property = e.key.substr(own.size());
      if (property == "type") {
        type = e.value;
        filter.where = e.where;
      } else if (property == "command") {
        command = e.value;
      } else if (property == "charset") {
        charset = e.value;
      } else if (property == "timeout") {
        filter.timeout = parse_duration(e.value, ValueContext{e.key, e.where}, {.min = 100, .max = 600'000});
      } else {
        throw ConfigError(e.where.to_string() + ": " + e.key +
                          ": unknown config filter property (type, and for external: command, charset, timeout)");
      }
    }
    if (!type) throw ConfigError(list.where.to_string() + ": " + prefix + name + ".type is missing (env or external)");
    const auto kind = filter_type(*type);
    if (!kind)
      throw ConfigError(filter.where.to_string() + ": " + prefix + name + ".type: \"" + *type +
                        "\" is not a config filter Sluice has: env (the environment) or external (a command's output); "
                        "Hadoop's credential store and custom classes are not supported");
    filter.type = *kind;
    if (filter.type == FilterType::external) {
      filter.command = parse_word_list(command.value_or(""));
      if (filter.command.empty())
        throw ConfigError(filter.where.to_string() + ": " + prefix + name +
                          ".command is missing: the command to run (the key is its last argument)");
      if (charset) {
        std::string lower = *charset;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (lower != "utf-8" && lower != "utf8")
          throw ConfigError(filter.where.to_string() + ": " + prefix + name + ".charset: \"" + *charset +
                            "\": only UTF-8 is supported");
      }
    } else if (command || charset) {
      throw ConfigError(filter.where.to_string() + ": " + prefix + name +
                        ": command and charset are an external filter's, not env's");
    }
    filters.push_back(std::move(filter));
  }
  // Every key under configfilters must belong to a listed filter.
  for (const FlatEntry& e : flat)
    if (e.key.starts_with(prefix) && std::none_of(filters.begin(), filters.end(), [&](const Filter& f) {
          return e.key.starts_with(prefix + f.name + ".");
        }))
      throw ConfigError(e.where.to_string() + ": " + e.key + ": configures a filter not listed in " + agent +
                        ".configfilters");
  return filters;
}

}  // namespace

void apply_config_filters(FlatConfig& flat) {
  std::map<std::string, FlatEntry> lists;  // agent → its configfilters line
  for (const FlatEntry& e : flat) {
    const size_t dot = e.key.find('.');
    if (dot != std::string::npos && e.key.compare(dot + 1, std::string::npos, "configfilters") == 0)
      lists.emplace(e.key.substr(0, dot), e);
  }
  std::map<std::string, std::vector<Filter>> filters;  // by agent
  for (const auto& [agent, list] : lists) {
    filters[agent] = take_filters(flat, agent, list);
    const std::string own = agent + ".configfilters";
    std::erase_if(flat, [&](const FlatEntry& e) { return e.key == own || e.key.starts_with(own + "."); });
  }
  // A reference to a filter the agent lacks stays as written here (the file may hold other
  // agents'); config::assemble refuses it in the agent it builds.
  for (FlatEntry& e : flat) {
    const auto mine = filters.find(e.key.substr(0, e.key.find('.')));
    if (mine == filters.end()) continue;
    for (Filter& filter : mine->second) substitute(filter, e);
  }
}

}  // namespace sluice::config
