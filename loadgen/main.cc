// sluice-loadgen: a rate-controlled syslog blaster (TCP, or UDP with --udp) whose every event
// carries a connection id and sequence number; --verify reads them back from Kafka and proves
// none was lost or duplicated (over UDP: none lost without a counted drop); --receive is a
// discard receiver to measure senders against.

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "agent/api/property_values.h"
#include "loadgen/receiver.h"
#include "loadgen/relp_sender.h"
#include "loadgen/sender.h"
#include "loadgen/verifier.h"
#include "sinks/kafka/topic_reader.h"
#include "tools/man_page.h"

namespace {

using namespace sluice::loadgen;

std::chrono::milliseconds duration_arg(const std::string& text, const std::string& option) {
  return sluice::config::parse_duration(text, {option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

uint64_t stored_messages(sluice::kafka::TopicReader& reader) {
  uint64_t total = 0;
  for (const auto& p : reader.offsets(std::chrono::seconds(10))) total += static_cast<uint64_t>(p.high);
  return total;
}

// --watch-offsets: the topic's stored count and rate once a second, for `duration`.
int watch_offsets(const std::string& bootstrap, const std::string& topic, std::chrono::milliseconds duration,
                  const std::string& csv, bool quiet) {
  sluice::kafka::TopicReader reader(bootstrap, topic);
  std::ofstream rows;
  if (!csv.empty()) {
    rows.open(csv);
    rows << "elapsed_s,stored,events_per_s\n";
  }
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = stored_messages(reader);
  auto last_time = std::chrono::steady_clock::now();
  for (auto next = start + std::chrono::seconds(1); next <= start + duration; next += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(next);
    const uint64_t now_stored = stored_messages(reader);
    const auto now = std::chrono::steady_clock::now();
    const double rate = (now_stored - last) / std::chrono::duration<double>(now - last_time).count();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (!quiet)
      std::fprintf(stderr, "offsets: %6.1fs stored %12llu  %10.0f ev/s\n", elapsed,
                   static_cast<unsigned long long>(now_stored), rate);
    if (rows.is_open()) rows << elapsed << "," << now_stored << "," << static_cast<uint64_t>(rate) << std::endl;
    last = now_stored;
    last_time = now;
  }
  std::cout << last << "\n";
  return 0;
}

// --receive: count and discard what senders send, for `duration`.
int receive(uint16_t port, std::chrono::milliseconds duration, bool quiet) {
  CountingReceiver receiver(port);
  std::fprintf(stderr, "receiver: listening on 127.0.0.1:%u for %.0f s\n", receiver.port(), duration.count() / 1000.0);
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = 0;
  for (auto next = start + std::chrono::seconds(1); next <= start + duration; next += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(next);
    const uint64_t events = receiver.events();
    if (!quiet)
      std::fprintf(stderr, "receiver: %10llu ev/s  total %12llu\n", static_cast<unsigned long long>(events - last),
                   static_cast<unsigned long long>(events));
    last = events;
  }
  receiver.stop();
  std::printf("{\"received\":%llu,\"bytes\":%llu,\"connections\":%llu}\n",
              static_cast<unsigned long long>(receiver.events()), static_cast<unsigned long long>(receiver.bytes()),
              static_cast<unsigned long long>(receiver.connections_accepted()));
  return 0;
}

}  // namespace

// Each connection is a file descriptor: raise the soft limit as far as `connections` need,
// and say so clearly when the hard limit does not allow them.
static void ensure_file_limit(uint64_t connections) {
  const uint64_t needed = connections + 64;  // stdio, the Kafka client, the CSV file
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed);
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < needed)
    throw std::invalid_argument("--connections " + std::to_string(connections) + " needs " + std::to_string(needed) +
                                " file descriptors; the hard limit is " + std::to_string(limit.rlim_max) +
                                " (raise it: ulimit -Hn, LimitNOFILE)");
}

int main(int argc, char** argv) {
  // A receiver that resets a connection must not kill us (OpenSSL's writes have no MSG_NOSIGNAL):
  // the write fails, is counted as possibly lost, and the connection comes back.
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"sluice-loadgen: send numbered syslog events over TCP or UDP; --verify reads them back from Kafka"};
  std::vector<std::string> targets;
  SendOptions send;
  std::string duration = "10s", ramp = "0s", summary_json, bootstrap, topic = "ApacheLog", expect_file, idle = "2s",
              timeout = "120s", csv, framing = "lf", replay;
  bool verify = false, quiet = false, offsets = false, watch = false, json = false;
  uint64_t counted_drops = 0;
  int receive_port = -1;
  VerifyOptions verify_options;
  app.add_option("-t,--target", targets, "host:port to send to (repeat, or space-separate, for several)");
  app.add_option("-c,--connections", send.connections,
                 "TCP connections (with --udp: UDP sockets), spread round-robin over the targets")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--threads", send.threads, "Sender threads; 0 = min(connections, 2)")->capture_default_str();
  app.add_option("-r,--rate", send.rate, "Events per second over all connections; 0 = as fast as possible")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--ramp", ramp, "Rise linearly from 0 to --rate over this long (e.g. 20s)")->capture_default_str();
  app.add_option("-s,--size", send.format.size, "Bytes per event: the syslog message and its LF")
      ->capture_default_str();
  app.add_option("--template", send.format.template_name, "apache, rfc5424, or file (with --replay)")
      ->check(CLI::IsMember({"apache", "rfc5424", "file"}))
      ->capture_default_str();
  app.add_option("--replay", replay,
                 "Send the lines of this file in turn (each gets the id appended); implies --template file");
  app.add_option("--framing", framing, "lf (newline) or octet (RFC 6587 octet counting); TCP only")
      ->check(CLI::IsMember({"lf", "octet"}))
      ->capture_default_str();
  app.add_flag("--udp", send.udp,
               "Send each event as one UDP datagram of --size bytes (sendmmsg), no framing; the summary records "
               "what the machine's input backlog dropped");
  app.add_flag("--tls", send.tls, "TCP connections over TLS (RFC 5425); see --cert, --key, --ca");
  app.add_flag("--relp", send.relp,
               "RELP sessions (a type = relp source): each event counted once the receiver acknowledges it, and the "
               "time to that reply reported (ack p50/p99); unanswered events are sent again after a reconnect");
  app.add_option("--window", send.relp_window,
                 "With --relp: events sent and not yet acknowledged, at most, per "
                 "connection (omrelp's windowSize)")
      ->default_val(128);
  app.add_option("--cert", send.tls_client.cert, "With --tls: a client certificate (PEM) to show");
  app.add_option("--key", send.tls_client.key, "With --tls: the client certificate's key (PEM)");
  app.add_option("--ca", send.tls_client.ca, "With --tls: verify the server against these CAs (PEM); else no check");
  bool no_gso = false;
  app.add_flag("--no-gso", no_gso,
               "With --udp: one send per datagram, not 64 cut by the kernel (UDP_SEGMENT); the receiver sees the "
               "same datagrams either way, we spend more CPU");
  app.add_option("-d,--duration", duration, "How long to send (e.g. 10s, 2m); every run is bounded")
      ->capture_default_str();
  app.add_option("-n,--count", send.count, "Total events to send; stops early when reached (0 = no limit)");
  app.add_option("--summary-json", summary_json,
                 "Write the send summary (per-connection counts) here, for --verify --expect");
  app.add_flag("--json", json, "Print the send summary as JSON on stdout");
  app.add_option("--csv", csv,
                 "Send: one row per second (rate, total, connections up, reconnects, blocked %); "
                 "--watch-offsets: elapsed_s,stored,events_per_s");
  app.add_flag("-q,--quiet", quiet, "No live progress");
  app.add_flag("--verify", verify, "Verify mode: read the topic back from Kafka and check every event arrived once");
  app.add_option("--bootstrap", bootstrap, "Verify/offsets: Kafka bootstrap servers");
  app.add_option("--topic", topic, "Verify/offsets: topic")->capture_default_str();
  app.add_option("--expect", expect_file, "Verify: the sender's --summary-json, so that lost tail events count too");
  app.add_option("--idle", idle,
                 "Verify: stop after every partition is read to its end and nothing new came for this long")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "Verify: give up after this long")->capture_default_str();
  app.add_option("--counted-drops", counted_drops,
                 "Verify a UDP run: the datagrams the agent counted as dropped (the sum of its "
                 "sluice_source_udp_kernel_drops_total, sluice_source_datagrams_unread_at_shutdown_total and "
                 "sluice_source_events_dropped_at_shutdown_total); missing datagrams beyond these and the "
                 "backlog's drops fail the verdict");
  app.add_option("--from-offset", verify_options.from_offset, "Verify: start every partition at this offset");
  app.add_option("--from-time", verify_options.from_time_ms,
                 "Verify: start at the first message at or after this time (ms since epoch)");
  app.add_flag("--offsets", offsets, "Print the messages stored in the topic (sum of high watermarks) and exit");
  app.add_flag("--watch-offsets", watch,
               "Every second for --duration, print (and with --csv, write) the messages stored and the rate");
  app.add_option("--receive", receive_port,
                 "Discard receiver: listen on this loopback port (0: any) for --duration, count events");
  bool print_man_page = false;
  app.add_flag("--print-man-page", print_man_page, "Print this manual as roff")->group("");
  CLI11_PARSE(app, argc, argv);
  if (print_man_page) {
    std::cout << sluice::tools::man_page(
        app, "sluice-loadgen", "send numbered syslog events to an agent, and verify them in Kafka",
        {"sluice-loadgen -t HOST:PORT [OPTIONS]", "sluice-loadgen --verify --bootstrap BROKERS [OPTIONS]"},
        "sluice " SLUICE_VERSION,
        {{"EXIT STATUS",
          "0: sent (or, with --verify, every event found once); 1: events were missing or "
          "duplicated, or an argument is wrong."},
         {"SEE ALSO", "sluice(1), sluice-kafka-mock(1)."}});
    return 0;
  }

  try {
    if (receive_port >= 0)
      return receive(static_cast<uint16_t>(receive_port), duration_arg(duration, "--duration"), quiet);
    if (offsets || watch) {
      if (bootstrap.empty()) throw std::invalid_argument("--offsets and --watch-offsets need --bootstrap");
      if (watch) return watch_offsets(bootstrap, topic, duration_arg(duration, "--duration"), csv, quiet);
      sluice::kafka::TopicReader reader(bootstrap, topic);
      std::cout << stored_messages(reader) << "\n";
      return 0;
    }
    if (verify) {
      if (bootstrap.empty()) throw std::invalid_argument("--verify needs --bootstrap");
      const SenderSummary sent = expect_file.empty() ? SenderSummary{} : read_sender_summary(expect_file);
      if (counted_drops && !sent.udp)
        throw std::invalid_argument("--counted-drops is for UDP runs: give the --udp sender's summary with --expect");
      verify_options.idle = duration_arg(idle, "--idle");
      verify_options.timeout = duration_arg(timeout, "--timeout");
      verify_options.counted_drops = counted_drops;
      const Verdict verdict = verify_topic(bootstrap, topic, sent, verify_options);
      std::cout << verdict.report();
      return verdict.ok() ? 0 : 1;
    }
    if (targets.empty()) throw std::invalid_argument("give at least one --target host:port");
    for (const std::string& t : targets)
      for (const std::string& word : sluice::config::parse_word_list(t)) send.targets.push_back(parse_target(word));
    send.duration = duration_arg(duration, "--duration");
    send.ramp = duration_arg(ramp, "--ramp");
    if (send.duration.count() == 0)
      throw std::invalid_argument("--duration must be positive: every run is bounded in time");
    if (!replay.empty()) {
      send.format.template_name = "file";
      send.format.replay_lines = read_replay_lines(replay);
    } else if (send.format.template_name == "file") {
      throw std::invalid_argument("--template file needs --replay FILE");
    }
    if (!send.tls && (!send.tls_client.cert.empty() || !send.tls_client.key.empty() || !send.tls_client.ca.empty()))
      throw std::invalid_argument("--cert, --key and --ca go with --tls");
    if (send.udp && framing != "lf")
      throw std::invalid_argument("--framing is for TCP: over --udp each datagram is one event");
    if (send.relp && (send.udp || send.tls || framing != "lf"))
      throw std::invalid_argument("--relp frames its own messages over plain TCP: not with --udp, --tls or --framing");
    send.udp_gso = !no_gso;
    send.format.framing = send.udp || send.relp ? Framing::datagram
                          : framing == "octet"  ? Framing::octet_counting
                                                : Framing::lf;
    send.csv_path = csv;
    ensure_file_limit(static_cast<uint64_t>(send.connections));
    if (quiet) send.progress_interval = std::chrono::milliseconds(0);
    const SendResult result = send.relp ? send_relp(send) : send_events(send);
    std::fprintf(stderr,
                 "loadgen: sent %llu events in %.2f s: %.0f events/s over %zu %s; %llu possibly lost, "
                 "%llu reconnects, %.2f CPU-s%s\n",
                 static_cast<unsigned long long>(result.sent), result.seconds, result.rate(), result.connections.size(),
                 send.udp ? "UDP socket(s)" : "connection(s)", static_cast<unsigned long long>(result.possibly_lost),
                 static_cast<unsigned long long>(result.reconnects), result.cpu_seconds,
                 result.ok() ? "" : " (a connection was still down at the end)");
    if (send.relp)
      std::fprintf(stderr, "loadgen: RELP: %llu acknowledged (window %d); ack latency p50 %.2f ms, p99 %.2f ms\n",
                   static_cast<unsigned long long>(result.acknowledged), result.relp_window, result.ack_p50_ms,
                   result.ack_p99_ms);
    if (send.udp)
      std::fprintf(stderr, "loadgen: the input backlog dropped %llu packet(s) on this machine while we sent\n",
                   static_cast<unsigned long long>(result.backlog_drops));
    if (!summary_json.empty()) std::ofstream(summary_json) << result.to_json();
    if (json) std::cout << result.to_json();
    return result.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "sluice-loadgen: " << e.what() << "\n";
    return 2;
  }
}
