# Splits a perf profile of the agent (`perf script -F comm,tid,ip,sym`, DWARF call graphs) into
# Sluice's own code and librdkafka's: each sample goes to the nearest frame, from the leaf up,
# that is one or the other, so that the C library and the kernel (malloc, memcpy, send, recv)
# count for the code that called them. Prints the two shares and, for each side, the functions
# whose samples they are (self plus what they called outside both), as markdown.
#
#   perf script -i perf.data -F comm,tid,ip,sym | awk -f bench/profile.awk
#
# librdkafka is linked in statically, so the split is by name: its C functions (rd_*, and the
# compression and hashing code it bundles), against Sluice's C++ (namespace sluice).
#
# Then the same split by thread: librdkafka's own threads (named "rdk:..."), the sources' (stream
# workers, the UDP source's loops), the sinks' (their run loops), and the rest. Each sample whose
# stack shows a source's or a sink's frame is a vote for that role; a thread's role is the one with
# the most votes (a tie: the source), and every sample of the thread counts for it, those whose
# stack was cut short of its root (the kernel's reads under libuv, which has no symbols) and the
# rare one that voted otherwise too. A thread with no vote is the rest's. So the source's part of
# Sluice's share can be read apart from the sink's: the per-event work a source does before any
# sink sees the event.

function side(sym) {
  if (sym ~ /sluice::/) return "sluice"
  if (sym ~ /^(rd_|rdk|__rd|snappy|LZ4|lz4|ZSTD|zstd|XXH|crc32c|thrd_|mtx_|cnd_|tss_|rwlock_|tinycthread|murmur2|unittest_)/)
    return "librdkafka"
  return ""
}

# A frame line: "\t    addr sym+0xoff (dso)" or "\t    addr sym (dso)".
function frame_symbol(line,   s) {
  s = line
  sub(/^[ \t]*[0-9a-f]+ /, "", s)
  sub(/ \([^()]*\)$/, "", s)
  sub(/\+0x[0-9a-f]+$/, "", s)
  return s
}

# What a frame says of its thread's role, or "".
function role_of(sym) {
  if (sym ~ /^(sluice::net::StreamWorker::|sluice::syslog_udp::SyslogUdpSource::IoThread::loop|uv_run$)/) return "source"
  if (sym ~ /^sluice::([a-z_]+::)?[A-Za-z]+Sink::run(\(|$)|^sluice::NullSink::start\(\)::/) return "sink"
  return ""
}

function finish_sample() {
  if (!in_sample) return
  samples++
  if (owner == "") { owner = "other"; owner_sym = first_sym == "" ? "[unknown]" : first_sym }
  count[owner]++
  by_symbol[owner SUBSEP owner_sym]++
  by_thread[tid SUBSEP owner]++
  if (sample_role != "") role_votes[tid SUBSEP sample_role]++
  in_sample = 0
}

/^[^ \t]/ {  # a sample's header: "comm tid"
  finish_sample()
  in_sample = 1; owner = ""; owner_sym = ""; first_sym = ""; sample_role = ""
  tid = $NF
  if ($1 ~ /^rdk:/) librdkafka_thread[tid] = 1  # librdkafka names its threads
  threads[tid] = 1
  next
}

/^[ \t]+[0-9a-f]+ / {
  if (!in_sample) next
  sym = frame_symbol($0)
  if (sample_role == "") sample_role = role_of(sym)
  if (owner != "") next
  if (first_sym == "") first_sym = sym
  s = side(sym)
  if (s != "") { owner = s; owner_sym = sym }
  next
}

/^$/ { finish_sample() }

END {
  finish_sample()
  if (samples == 0) { print "no samples"; exit 1 }
  printf "| part | share of the agent's CPU samples |\n|---|---|\n"
  for (o in count) printf "| %s | %.1f%% |\n", o, 100 * count[o] / samples | "sort -t'|' -k3 -rn"
  close("sort -t'|' -k3 -rn")
  printf "\n%d samples\n", samples
  for (part = 1; part <= 3; part++) {
    o = part == 1 ? "sluice" : part == 2 ? "librdkafka" : "other"
    if (!(o in count)) continue
    printf "\n**%s**, by function (its own time and what it called outside both parts), at least 0.3%%:\n\n", o
    printf "| function | share of all samples |\n|---|---|\n"
    cmd = "sort -t'|' -k3 -rn | head -25"
    for (key in by_symbol) {
      split(key, k, SUBSEP)
      if (k[1] != o || by_symbol[key] / samples < 0.003) continue
      name = k[2]
      gsub(/\|/, "\\|", name)
      if (length(name) > 110) name = substr(name, 1, 107) "..."
      printf "| %s | %.1f%% |\n", name, 100 * by_symbol[key] / samples | cmd
    }
    close(cmd)
  }
  print_threads()
}

function print_threads(   t, r, source_votes, sink_votes, role, o, part, label, all) {
  for (t in threads) {
    source_votes = role_votes[t SUBSEP "source"] + 0
    sink_votes = role_votes[t SUBSEP "sink"] + 0
    role = t in librdkafka_thread ? "librdkafka" : source_votes + sink_votes == 0 ? "rest" : \
           source_votes >= sink_votes ? "source" : "sink"
    thread_count[role]++
    for (o = 1; o <= 3; o++) {
      part = o == 1 ? "sluice" : o == 2 ? "librdkafka" : "other"
      role_part[role SUBSEP part] += by_thread[t SUBSEP part] + 0
    }
  }
  printf "\n**By thread** (a thread's role from its stacks; each cell a share of all samples):\n\n"
  printf "| threads | how many | all | Sluice's code | librdkafka's | other |\n|---|---|---|---|---|---|\n"
  for (r = 1; r <= 4; r++) {
    role = r == 1 ? "source" : r == 2 ? "sink" : r == 3 ? "librdkafka" : "rest"
    if (!(role in thread_count)) continue
    label = role == "source" ? "the sources' (stream workers, UDP loops)" : role == "sink" ? "the sinks' (their run loops)" : \
            role == "librdkafka" ? "librdkafka's own (rdk:...)" : "the rest (main, cluster view, ...)"
    all = role_part[role SUBSEP "sluice"] + role_part[role SUBSEP "librdkafka"] + role_part[role SUBSEP "other"]
    printf "| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", label, thread_count[role], 100 * all / samples,
      100 * role_part[role SUBSEP "sluice"] / samples, 100 * role_part[role SUBSEP "librdkafka"] / samples,
      100 * role_part[role SUBSEP "other"] / samples
  }
}
