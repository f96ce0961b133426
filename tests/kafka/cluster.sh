#!/usr/bin/env bash
# A real Apache Kafka 4.4 cluster (KRaft) on loopback, for the tests, the benchmark and by hand.
# The jars come from Maven Central (bash .ci/install-java; tests/kafka/pom.xml).
#
#   tests/kafka/cluster.sh start DIR [--nodes 1|3] [--sasl] [--auto-create] [--heap 512m] [--owner PID]
#   tests/kafka/cluster.sh topic DIR NAME PARTITIONS [--replication N] [--config key=value]...
#   tests/kafka/cluster.sh leader DIR TOPIC PARTITION    # prints the node that leads it
#   tests/kafka/cluster.sh kill DIR NODE                 # SIGKILL one node: a crash
#   tests/kafka/cluster.sh stop-node DIR NODE            # SIGTERM one node and wait for it
#   tests/kafka/cluster.sh restart DIR NODE [--no-wait]  # start a stopped node again, with its data
#   tests/kafka/cluster.sh wait DIR NODE                 # until a node restarted with --no-wait is up
#   tests/kafka/cluster.sh consume DIR TOPIC MAX [TIMEOUT_MS]   # Kafka's own console consumer
#   tests/kafka/cluster.sh produce DIR TOPIC FILE [MECHANISM]   # Kafka's own console producer: "key<TAB>value"
#                                                        # lines; with MECHANISM (PLAIN, SCRAM-SHA-512/256) over SASL_SSL
#   tests/kafka/cluster.sh dump-log DIR TOPIC            # Kafka's DumpLogSegments on node 1's logs of the topic:
#                                                        # each batch's header (codec, count, producer id)
#   tests/kafka/cluster.sh stop DIR                      # every node by PID; SIGKILL after 20 s
#
# start: one combined broker + controller per node on free loopback ports, each with its own
# log directory under DIR/node-N and a small heap; three nodes replicate 3 ways with
# min.insync.replicas 2. Waits (at most 150 s in all) until every node has started, then writes
# DIR/bootstrap (PLAINTEXT host:port,...) and, with --sasl, DIR/bootstrap.sasl (a SASL_SSL
# listener with SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN, user "sluice", password "sluice-secret", CA in
# DIR/ca.pem) and DIR/bootstrap.ssl (an SSL listener that requires a client certificate signed by that
# CA: DIR/client-a.pem/.key and DIR/client-b.pem/.key are two), whose SASL_SSL listener also takes
# OAUTHBEARER tokens signed by DIR/oauth.key (checked against DIR/jwks.json: iss sluice-test, aud
# kafka; sessions re-authenticate every 5 s). If a node does not start, what was started is stopped
# and it fails. With --owner,
# a watchdog stops the cluster once that process is gone (a test program that crashed or was
# killed at its timeout). Each node's PID is in DIR/node-N/pid and is checked against the node's
# command line before it is signalled; nothing is ever ended but by those PIDs. Auto-creation of
# topics is off unless --auto-create (Kafka's own default: on) turns it on, with ten partitions.
# Kafka's tools (topics, console producer and consumer) are bounded by `timeout`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
libs=${SLUICE_KAFKA_LIBS:-$root/build/java/kafka}
# --foreground: timeout stays in the caller's process group, so a test's kill of that group ends it too.
java_cp() { timeout --foreground -k 5 "${tool_seconds:-60}" java -cp "$libs/*" "$@"; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

free_ports() {  # N free loopback ports, held together so that they differ
  # Below the kernel's ephemeral range (net.ipv4.ip_local_port_range; 32768 and up by default),
  # so that while a node is down for a restart no client's outgoing connection takes its port.
  # A range that starts low (sysctl/99-sluice.conf's 1024) leaves no such room: any free port.
  python3 - "$1" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
held = []
while len(held) < int(sys.argv[1]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randint(max(1024, low - 12000), low - 1) if low > 10000 else 0))
        held.append(s)
    except OSError:
        s.close()
print(" ".join(str(s.getsockname()[1]) for s in held))
PY
}

node_started() {  # DIR NODE STARTS: the node's log says "Kafka Server started" more than STARTS times
  local n
  n=$(grep -c "Kafka Server started" "$1/node-$2/server.log" 2>/dev/null || true)
  [ "${n:-0}" -gt "$3" ]
}

launch() {  # DIR NODE: start the node's JVM in the background, its PID to node-N/pid
  local node_dir="$1/node-$2"
  # shellcheck disable=SC2046
  nohup java $(cat "$node_dir/jvm-options") -cp "$libs/*" kafka.Kafka "$node_dir/server.properties" \
    >>"$node_dir/stdout.log" 2>&1 &
  echo $! >"$node_dir/pid"
}

wait_started() {  # DIR NODE STARTS [DEADLINE (in $SECONDS; default 120 s from now)]
  local deadline=${4:-$((SECONDS + 120))}
  until node_started "$1" "$2" "$3"; do
    node_alive "$1" "$2" || die "node $2 exited: $(tail -n 20 "$1/node-$2/stdout.log" "$1/node-$2/server.log" 2>/dev/null)"
    [ $SECONDS -lt "$deadline" ] || die "node $2 did not start in time (see $1/node-$2/server.log)"
    sleep 0.2
  done
}

node_pid() {  # DIR NODE: the node's PID if that process is still the node's JVM, else nothing
  local pid
  pid=$(cat "$1/node-$2/pid" 2>/dev/null) || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/node-$2/server.properties" && echo "$pid"
  return 0
}

# DIR NODE: the node we just launched is still running. Not node_pid: between the fork and the
# exec of its JVM the process's command line is still this script's, which would read as "exited".
node_alive() {
  local pid
  pid=$(cat "$1/node-$2/pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

stop_cluster() {  # DIR: every node still running, by PID, and the watchdog unless it is us
  local dir=$1 wd f n pids=()
  wd=$(cat "$dir/watchdog.pid" 2>/dev/null || true)
  if [ -n "$wd" ] && [ "$wd" != "$$" ] && tr '\0' ' ' <"/proc/$wd/cmdline" 2>/dev/null | grep -F "watchdog" | grep -qF "$dir"; then
    kill -TERM "$wd" 2>/dev/null || true
  fi
  for f in "$dir"/node-*/pid; do
    [ -f "$f" ] || continue
    n=${f%/pid}; n=${n##*/node-}
    pid=$(node_pid "$dir" "$n")
    [ -z "$pid" ] || pids+=("$pid")
  done
  stop_pids "${pids[@]}"
}

make_certificates() {  # DIR: a CA and a certificate for 127.0.0.1 signed by it, PEM
  local d=$1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=sluice test CA" -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$d/broker.key" -out "$d/broker.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/san.ext"
  openssl x509 -req -in "$d/broker.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
    -extfile "$d/san.ext" -out "$d/broker.crt" 2>/dev/null
  # Kafka's PEM keystore: the PKCS#8 key and the certificate chain in one file.
  openssl pkcs8 -topk8 -nocrypt -in "$d/broker.key" -out "$d/broker.pk8"
  cat "$d/broker.pk8" "$d/broker.crt" "$d/ca.pem" >"$d/broker-keystore.pem"
  # OAUTHBEARER: the key a token server (tests/support/token_server.h) signs JWTs with, and the JWKS
  # the broker checks them against.
  openssl genrsa -out "$d/oauth.key" 2048 2>/dev/null
  python3 - "$(openssl rsa -in "$d/oauth.key" -noout -modulus | cut -d= -f2)" >"$d/jwks.json" <<'PY'
import base64, json, sys
b64 = lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")
print(json.dumps({"keys": [{"kty": "RSA", "kid": "sluice-test", "use": "sig", "alg": "RS256",
                            "n": b64(bytes.fromhex(sys.argv[1])), "e": b64((65537).to_bytes(3, "big"))}]}))
PY
  # Two client certificates for the SSL listener that requires one (a rotation goes from a to b).
  local c
  for c in a b; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=sluice-$c" -keyout "$d/client-$c.key" -out "$d/client-$c.csr" 2>/dev/null
    openssl x509 -req -in "$d/client-$c.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
      -out "$d/client-$c.pem" 2>/dev/null
  done
}

start() {
  local dir=$1 nodes=1 sasl="" heap=512m owner="" auto_create=false
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) nodes=$2; shift 2 ;;
      --sasl) sasl=1; shift ;;
      --auto-create) auto_create=true; shift ;;
      --heap) heap=$2; shift 2 ;;
      --owner) owner=$2; shift 2 ;;
      *) die "start: unknown option $1" ;;
    esac
  done
  [ -d "$libs" ] || die "no Kafka jars in $libs: run bash .ci/install-java"
  command -v java >/dev/null || die "no java: run bash .ci/install-java"
  mkdir -p "$dir"
  [ -n "$sasl" ] && make_certificates "$dir"
  local -a ports
  read -r -a ports <<<"$(free_ports $((nodes * 4)))"
  local voters="" bootstrap="" bootstrap_sasl="" bootstrap_ssl="" n
  for ((n = 1; n <= nodes; n++)); do
    voters+="${voters:+,}$n@127.0.0.1:${ports[$(( (n - 1) * 4 + 1 ))]}"
    bootstrap+="${bootstrap:+,}127.0.0.1:${ports[$(( (n - 1) * 4 ))]}"
    bootstrap_sasl+="${bootstrap_sasl:+,}127.0.0.1:${ports[$(( (n - 1) * 4 + 2 ))]}"
    bootstrap_ssl+="${bootstrap_ssl:+,}127.0.0.1:${ports[$(( (n - 1) * 4 + 3 ))]}"
  done
  local replication=$((nodes >= 3 ? 3 : 1)) min_isr=$((nodes >= 3 ? 2 : 1))
  local cluster_id
  # URL-safe base64 starts with '-' one time in 64, which kafka-storage's argument parser takes for an
  # option ("expected one argument"); Kafka's own random-uuid never hands out such an id, nor do we.
  cluster_id=$(python3 -c 'import base64, uuid
while True:
    text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not text.startswith("-"):
        print(text)
        break')
  for ((n = 1; n <= nodes; n++)); do
    local node_dir="$dir/node-$n" plain=${ports[$(( (n - 1) * 4 ))]} controller=${ports[$(( (n - 1) * 4 + 1 ))]}
    local secure=${ports[$(( (n - 1) * 4 + 2 ))]} mutual=${ports[$(( (n - 1) * 4 + 3 ))]}
    mkdir -p "$node_dir/data"
    local listeners="PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$controller"
    local advertised="PLAINTEXT://127.0.0.1:$plain"
    [ -n "$sasl" ] && listeners+=",SASL_SSL://127.0.0.1:$secure,SSL://127.0.0.1:$mutual" &&
      advertised+=",SASL_SSL://127.0.0.1:$secure,SSL://127.0.0.1:$mutual"
    cat >"$node_dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
log.dirs=$node_dir/data
num.partitions=$([ $auto_create = true ] && echo 10 || echo 1)
default.replication.factor=$replication
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$replication
transaction.state.log.replication.factor=$replication
transaction.state.log.min.isr=$min_isr
auto.create.topics.enable=$auto_create
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
PROPS
    if [ -n "$sasl" ]; then
      cat >>"$node_dir/server.properties" <<PROPS
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_sluice="sluice-secret";
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$dir/broker-keystore.pem
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=file://$dir/jwks.json
listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.audience=kafka
listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.issuer=sluice-test
listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=5000
listener.name.ssl.ssl.client.auth=required
listener.name.ssl.ssl.keystore.type=PEM
listener.name.ssl.ssl.keystore.location=$dir/broker-keystore.pem
listener.name.ssl.ssl.truststore.type=PEM
listener.name.ssl.ssl.truststore.location=$dir/ca.pem
PROPS
    fi
    cat >"$node_dir/log4j2.properties" <<LOG
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $node_dir/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.state.name = state.change.logger
logger.state.level = WARN
LOG
    local oauth_files=""  # the JWKS file the broker may read (Kafka 4 allows none by default)
    [ -n "$sasl" ] && oauth_files="-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=file://$dir/jwks.json -Dorg.apache.kafka.sasl.oauthbearer.allowed.files=$dir/jwks.json"
    echo "-Xmx$heap -Xms128m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true -Dlog4j2.configurationFile=$node_dir/log4j2.properties -Dkafka.logs.dir=$node_dir $oauth_files" >"$node_dir/jvm-options"
    local -a scram=()
    [ -n "$sasl" ] && scram=(--add-scram 'SCRAM-SHA-512=[name="sluice",password="sluice-secret"]'
                             --add-scram 'SCRAM-SHA-256=[name="sluice",password="sluice-secret"]')
    java_cp kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$node_dir/server.properties" "${scram[@]}" \
      >"$node_dir/format.log" 2>&1 || die "format of node $n failed: $(cat "$node_dir/format.log")"
  done
  local deadline=$((SECONDS + 150))
  trap 'stop_cluster "$dir"' EXIT  # a node that fails to start: none is left behind
  for ((n = 1; n <= nodes; n++)); do launch "$dir" "$n"; done
  for ((n = 1; n <= nodes; n++)); do wait_started "$dir" "$n" 0 "$deadline"; done
  trap - EXIT
  if [ -n "$owner" ]; then
    # Polls its owner once a second; stopped by `stop` (by PID) like the nodes.
    nohup bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" stop "$3"' watchdog \
      "$owner" "$root/tests/kafka/cluster.sh" "$dir" >/dev/null 2>&1 &
    echo $! >"$dir/watchdog.pid"
  fi
  echo "$nodes" >"$dir/nodes"
  echo "$bootstrap" >"$dir/bootstrap"
  [ -n "$sasl" ] && echo "$bootstrap_sasl" >"$dir/bootstrap.sasl" && echo "$bootstrap_ssl" >"$dir/bootstrap.ssl"
  echo "$bootstrap"
}

topics() { java_cp org.apache.kafka.tools.TopicCommand --bootstrap-server "$(cat "$1/bootstrap")" "${@:2}"; }

topic() {  # DIR NAME PARTITIONS [--replication N] [--config k=v]...
  local dir=$1 name=$2 partitions=$3 replication
  shift 3
  replication=$(( $(cat "$dir/nodes") >= 3 ? 3 : 1 ))
  local -a configs=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --replication) replication=$2; shift 2 ;;
      --config) configs+=(--config "$2"); shift 2 ;;
      *) die "topic: unknown option $1" ;;
    esac
  done
  local deadline=$((SECONDS + 60))
  # The controller may still be electing itself: retry, bounded.
  until topics "$dir" --create --topic "$name" --partitions "$partitions" --replication-factor "$replication" \
          "${configs[@]}" >"$dir/topic-$name.log" 2>&1; do
    grep -q "already exists" "$dir/topic-$name.log" && break
    [ $SECONDS -lt $deadline ] || die "cannot create topic $name: $(cat "$dir/topic-$name.log")"
    sleep 1
  done
  # Created is not yet served: until every broker's metadata shows each partition with a leader,
  # a produce may hit a broker that does not lead it yet (with acks=0 it then closes the
  # connection and those messages are gone without a word).
  until [ "$(served_partitions "$dir" "$name")" = "$partitions" ]; do
    [ $SECONDS -lt $deadline ] || die "topic $name: not every partition has a leader after 60 s"
    sleep 0.2
  done
}

served_partitions() {  # DIR TOPIC: how many of its partitions have a leader, as every broker says
  local fewest="" b n
  for b in $(tr ',' ' ' <"$1/bootstrap"); do
    n=$(kcat -b "$b" -L -t "$2" -m 5 2>/dev/null | grep -c "partition [0-9]*, leader [0-9]" || true)
    [ -z "$fewest" ] || [ "$n" -lt "$fewest" ] && fewest=$n
  done
  echo "${fewest:-0}"
}

leader() {  # DIR TOPIC PARTITION
  topics "$1" --describe --topic "$2" 2>/dev/null |
    awk -v p="$3" '{ for (i = 1; i < NF; i++) { if ($i == "Partition:") part = $(i + 1); if ($i == "Leader:" && part == p) { print $(i + 1); exit } } }'
}

stop_pids() {  # PID...: SIGTERM, then SIGKILL whatever is left after 20 s
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  local deadline=$((SECONDS + 20)) pid alive
  while :; do
    alive=()
    for pid in "$@"; do  # a zombie (exited, not yet reaped by whoever adopted it) is gone
      kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] && alive+=("$pid")
    done
    [ ${#alive[@]} -eq 0 ] && return 0
    [ $SECONDS -lt $deadline ] || break
    sleep 0.2
  done
  kill -KILL "${alive[@]}" 2>/dev/null || true
}

# DIR as one absolute path, whatever the caller wrote: node PIDs are checked against it.
[ $# -lt 2 ] || { command=$1 dir=$(realpath -m "$2"); shift 2; set -- "$command" "$dir" "$@"; }
case "${1:-}" in
  start) shift; start "$@" ;;
  topic) shift; topic "$@" ;;
  leader) shift; leader "$@" ;;
  kill) pid=$(node_pid "$2" "$3"); [ -n "$pid" ] || die "node $3 is not running"; kill -KILL "$pid" ;;
  stop-node) pid=$(node_pid "$2" "$3"); [ -n "$pid" ] || die "node $3 is not running"; stop_pids "$pid" ;;
  restart)  # DIR NODE [--no-wait]: with --no-wait, `wait DIR NODE` later (nodes that need each other)
    starts=$(grep -c "Kafka Server started" "$2/node-$3/server.log" || true)
    echo "${starts:-0}" >"$2/node-$3/starts-before"
    launch "$2" "$3"
    [ "${4:-}" = "--no-wait" ] || wait_started "$2" "$3" "${starts:-0}" ;;
  wait) wait_started "$2" "$3" "$(cat "$2/node-$3/starts-before")" ;;
  consume)
    tool_seconds=$(( ${5:-30000} / 1000 + 30 )) java_cp org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$(cat "$2/bootstrap")" --topic "$3" \
      --from-beginning --max-messages "$4" --timeout-ms "${5:-30000}" 2>/dev/null ;;
  produce)
    bootstrap=$(cat "$2/bootstrap") security=()
    if [ -n "${5:-}" ]; then  # Kafka's Java client over the SASL_SSL listener: are the credentials right?
      login=org.apache.kafka.common.security.plain.PlainLoginModule
      [ "$5" = PLAIN ] || login=org.apache.kafka.common.security.scram.ScramLoginModule
      printf '%s\n' "security.protocol=SASL_SSL" "sasl.mechanism=$5" "ssl.truststore.type=PEM" \
        "ssl.truststore.location=$2/ca.pem" \
        "sasl.jaas.config=$login required username=\"sluice\" password=\"sluice-secret\";" >"$2/client-$5.properties"
      bootstrap=$(cat "$2/bootstrap.sasl") security=(--producer.config "$2/client-$5.properties")
    fi
    java_cp org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" --topic "$3" "${security[@]}" \
      --producer-property acks=all --reader-property parse.key=true \
      --reader-property "key.separator=$(printf '\t')" <"$4" ;;
  dump-log)  # the segments node 1 wrote for the topic's partitions, as Kafka's own tool reads them
    segments=("$2/node-1/data/$3-"*/*.log)
    [ -e "${segments[0]}" ] || die "node 1 has no log of $3"
    java_cp org.apache.kafka.tools.DumpLogSegments --files "$(IFS=,; echo "${segments[*]}")" ;;
  stop) stop_cluster "$2" ;;
  *) sed -n '2,27p' "$0"; exit 2 ;;
esac
