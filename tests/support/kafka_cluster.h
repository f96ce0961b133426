#pragma once
// A real Apache Kafka 4.4 cluster (tests/kafka/cluster.sh) for the end-to-end tests: started
// once per test program and options (a JVM broker takes seconds to start, so test cases share
// it, each with topics of its own), stopped by PID when the program exits. The jars come from
// `bash .ci/install-java`; without them the test fails saying so, it does not pass quietly.

#include <string>

#include "tests/support/process.h"

namespace sluice::test {

class KafkaCluster {
 public:
  struct Options {
    int nodes = 1;
    // also a SASL_SSL listener (PLAIN, SCRAM-SHA-512/256 user sluice / sluice-secret) and an SSL one that
    // requires a client certificate (client_file("client-a.pem") and the others)
    bool sasl = false;
    bool auto_create = false;  // Kafka creates a topic a client asks for (ten partitions), as by its default
  };
  // The cluster of these options for this test program, started at the first call.
  static KafkaCluster& shared(Options options);

  explicit KafkaCluster(Options options);
  ~KafkaCluster();
  KafkaCluster(const KafkaCluster&) = delete;
  KafkaCluster& operator=(const KafkaCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& sasl_bootstrap() const { return sasl_bootstrap_; }
  const std::string& ssl_bootstrap() const { return ssl_bootstrap_; }
  std::string ca_file() const { return dir_.file("ca.pem"); }
  // The client certificates the SSL listener accepts: client-a.pem / client-a.key, client-b.*.
  std::string client_file(const std::string& name) const { return dir_.file(name); }
  int nodes() const { return options_.nodes; }

  // Throws std::runtime_error with the script's output if it fails.
  void create_topic(const std::string& topic, int partitions, const std::vector<std::string>& configs = {});
  int leader(const std::string& topic, int partition) const;
  void kill_node(int node);
  void stop_node(int node);
  void restart_node(int node);
  void stop_all();
  void restart_all();
  // Kafka's own kafka-console-producer: "key<TAB>value" lines of `file`, keyed; with a SASL
  // mechanism (PLAIN, SCRAM-SHA-512), as user sluice over the SASL_SSL listener.
  void console_produce(const std::string& topic, const std::string& file, const std::string& sasl_mechanism = "") const;
  // Kafka's own kafka-console-consumer: the payloads of up to `max` messages, one per line.
  std::string console_consume(const std::string& topic, int max, std::chrono::milliseconds timeout) const;
  // Kafka's DumpLogSegments on node 1's segments of the topic: a line per record batch
  // ("baseOffset: ... count: ... compresscodec: snappy ..."), as the broker stored it.
  std::string dump_log(const std::string& topic) const;

 private:
  std::string script(const std::vector<std::string>& args, std::chrono::milliseconds timeout) const;

  Options options_;
  TempDir dir_;
  std::string bootstrap_, sasl_bootstrap_, ssl_bootstrap_;
};

}  // namespace sluice::test
