// sluice-loadgen's default mode: send numbered events to the targets, at a rate, for a bounded time.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "agent/api/property_values.h"
#include "loadgen/avro_sender.h"
#include "loadgen/cli/commands.h"
#include "loadgen/relp_sender.h"

namespace sluice::loadgen::cli {
namespace {

// Each connection is a file descriptor: raise the soft limit as far as `connections` need,
// and say so clearly when the hard limit does not allow them.
void ensure_file_limit(uint64_t connections) {
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

}  // namespace

std::chrono::milliseconds duration_arg(const std::string& text, const std::string& option) {
  return config::parse_duration(text, {option, {"command line", 0}}, {.min = 0, .max = 86'400'000});
}

void add_send_options(CLI::App& app, SendCommand& o, CommonOptions& common) {
  app.add_option("-t,--target", o.targets, "host:port to send to (repeat, or space-separate, for several)");
  app.add_option("-c,--connections", o.send.connections,
                 "TCP connections (with --udp: UDP sockets), spread round-robin over the targets")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--from", o.send.from,
                 "Local addresses to send from, one per connection in turn (e.g. 127.0.0.2 127.0.0.3): each looks "
                 "like a client of its own (TCP and UDP; not with --relp or --protocol avro)");
  app.add_option("--first-connection", o.send.first_connection,
                 "The first connection's id (the others follow; RELP sessions start one above): sends into one topic "
                 "on ids of their own, verified together with --verify --expect A --expect B")
      ->check(CLI::Range(0, 99999))
      ->capture_default_str();
  app.add_option("--threads", o.send.threads, "Sender threads; 0 = min(connections, 2)")->capture_default_str();
  app.add_option("-r,--rate", o.send.rate, "Events per second over all connections; 0 = as fast as possible")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--ramp", o.ramp, "Rise linearly from 0 to --rate over this long (e.g. 20s)")->capture_default_str();
  app.add_option("-s,--size", o.send.format.size, "Bytes per event: the syslog message and its LF")
      ->capture_default_str();
  app.add_option("--template", o.send.format.template_name, "apache, rfc5424, or file (with --replay)")
      ->check(CLI::IsMember({"apache", "rfc5424", "file"}))
      ->capture_default_str();
  app.add_option("--priorities", o.send.format.priorities,
                 "The PRI of each event of the apache and rfc5424 templates, in turn (e.g. 134,131,132: info, error, "
                 "warning of local0); each event keeps --size")
      ->delimiter(',')
      ->check(CLI::Range(0, 191))
      ->capture_default_str();
  app.add_option("--replay", o.replay,
                 "Send the lines of this file in turn (each gets the id appended); implies --template file");
  app.add_option("--framing", o.framing, "lf (newline) or octet (RFC 6587 octet counting); TCP only")
      ->check(CLI::IsMember({"lf", "octet"}))
      ->capture_default_str();
  app.add_flag("--udp", o.send.udp,
               "Send each event as one UDP datagram of --size bytes (sendmmsg), no framing; the summary records "
               "what the machine's input backlog dropped");
  app.add_flag("--tls", o.send.tls, "TCP connections over TLS (RFC 5425); see --cert, --key, --ca");
  app.add_option("--protocol", o.protocol,
                 "syslog (plain or --tls), relp (RELP sessions, a type = relp source: each event counted once "
                 "the receiver acknowledges it, the time to that reply reported as ack p50/p99, unanswered events "
                 "sent again after a reconnect) or avro (Flume's Avro RPC, a type = avro source or Flume's: "
                 "appendBatch calls of --batch events with a few headers, each call counted once answered OK, one "
                 "answered FAILED or unanswered at a reconnect sent again)")
      ->check(CLI::IsMember({"syslog", "relp", "avro"}))
      ->capture_default_str();
  app.add_flag("--relp", o.send.relp, "The same as --protocol relp");
  app.add_option("--window", o.window,
                 "relp: events sent and not yet acknowledged, at most, per connection (omrelp's windowSize; default "
                 "128); avro: calls sent and not yet answered, at most, per connection (default 1, as Flume's "
                 "sink)");
  app.add_option("--batch", o.send.avro_batch, "avro: events per appendBatch call (Flume's sink's batch-size)")
      ->capture_default_str();
  app.add_option("--cert", o.send.tls_client.cert, "With --tls: a client certificate (PEM) to show");
  app.add_option("--key", o.send.tls_client.key, "With --tls: the client certificate's key (PEM)");
  app.add_option("--ca", o.send.tls_client.ca, "With --tls: verify the server against these CAs (PEM); else no check");
  app.add_flag("--no-gso", o.no_gso,
               "With --udp: one send per datagram, not 64 cut by the kernel (UDP_SEGMENT); the receiver sees the "
               "same datagrams either way, we spend more CPU");
  app.add_option("-d,--duration", common.duration, "How long to send (e.g. 10s, 2m); every run is bounded")
      ->capture_default_str();
  app.add_option("--write-timeout", o.write_timeout,
                 "After --duration, how long a write may still wait on a receiver that takes nothing (TCP, TLS, "
                 "RELP); then its events count as possibly lost and the connection closes, so that the run ends")
      ->capture_default_str();
  app.add_option("-n,--count", o.send.count, "Total events to send; stops early when reached (0 = no limit)");
  app.add_option("--summary-json", o.summary_json,
                 "Write the send summary (per-connection counts) here, for --verify --expect");
  app.add_flag("--json", o.json, "Print the send summary as JSON on stdout");
  app.add_option("--csv", common.csv,
                 "Send: one row per second (rate, total, connections up, reconnects, blocked %); "
                 "--watch-offsets: elapsed_s,stored,events_per_s");
  app.add_flag("-q,--quiet", common.quiet, "No live progress");
}

int run_send(SendCommand o, const CommonOptions& common) {
  SendOptions& send = o.send;
  if (o.targets.empty()) throw std::invalid_argument("give at least one --target host:port");
  for (const std::string& t : o.targets)
    for (const std::string& word : config::parse_word_list(t)) send.targets.push_back(parse_target(word));
  send.duration = duration_arg(common.duration, "--duration");
  send.ramp = duration_arg(o.ramp, "--ramp");
  send.write_timeout = duration_arg(o.write_timeout, "--write-timeout");
  if (send.duration.count() == 0)
    throw std::invalid_argument("--duration must be positive: every run is bounded in time");
  if (!o.replay.empty()) {
    send.format.template_name = "file";
    send.format.replay_lines = read_replay_lines(o.replay);
  } else if (send.format.template_name == "file") {
    throw std::invalid_argument("--template file needs --replay FILE");
  }
  if (!send.tls && (!send.tls_client.cert.empty() || !send.tls_client.key.empty() || !send.tls_client.ca.empty()))
    throw std::invalid_argument("--cert, --key and --ca go with --tls");
  if (send.udp && o.framing != "lf")
    throw std::invalid_argument("--framing is for TCP: over --udp each datagram is one event");
  send.relp = send.relp || o.protocol == "relp";
  send.avro = o.protocol == "avro";
  if (send.relp && send.avro) throw std::invalid_argument("--relp and --protocol avro: choose one");
  if ((send.relp || send.avro) && (send.udp || send.tls || o.framing != "lf"))
    throw std::invalid_argument("--protocol " + o.protocol +
                                " frames its own messages over plain TCP: not with --udp, --tls or --framing");
  if ((send.relp || send.avro) && !send.from.empty())
    throw std::invalid_argument("--from is for syslog over TCP or UDP, not --protocol " + o.protocol);
  if (o.window < 0) throw std::invalid_argument("--window must be at least 1");
  send.relp_window = o.window ? o.window : 128;
  send.avro_window = o.window ? o.window : 1;
  if (send.first_connection + static_cast<uint64_t>(send.connections) + (send.relp ? 1 : 0) > 100000)
    throw std::invalid_argument("--first-connection " + std::to_string(send.first_connection) + " with --connections " +
                                std::to_string(send.connections) + ": connection ids go up to 99999");
  send.udp_gso = !o.no_gso;
  send.format.framing = send.udp || send.relp || send.avro ? Framing::datagram
                        : o.framing == "octet"             ? Framing::octet_counting
                                                           : Framing::lf;
  send.csv_path = common.csv;
  ensure_file_limit(static_cast<uint64_t>(send.connections));
  if (common.quiet) send.progress_interval = std::chrono::milliseconds(0);
  const SendResult result = send.relp ? send_relp(send) : send.avro ? send_avro(send) : send_events(send);
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
  if (send.avro)
    std::fprintf(stderr,
                 "loadgen: Avro: %llu events in calls answered OK (batches of %d, %d call(s) in flight); answer "
                 "latency p50 %.2f ms, p99 %.2f ms\n",
                 static_cast<unsigned long long>(result.acknowledged), send.avro_batch, send.avro_window,
                 result.ack_p50_ms, result.ack_p99_ms);
  if (send.udp)
    std::fprintf(stderr, "loadgen: the input backlog dropped %llu packet(s) on this machine while we sent\n",
                 static_cast<unsigned long long>(result.backlog_drops));
  if (!o.summary_json.empty()) std::ofstream(o.summary_json) << result.to_json();
  if (o.json) std::cout << result.to_json();
  return result.ok() ? 0 : 1;
}

}  // namespace sluice::loadgen::cli
