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

function finish_sample() {
  if (!in_sample) return
  samples++
  if (owner == "") { owner = "other"; owner_sym = first_sym == "" ? "[unknown]" : first_sym }
  count[owner]++
  by_symbol[owner SUBSEP owner_sym]++
  in_sample = 0
}

/^[^ \t]/ {  # a sample's header: "comm tid"
  finish_sample()
  in_sample = 1; owner = ""; owner_sym = ""; first_sym = ""
  next
}

/^[ \t]+[0-9a-f]+ / {
  if (!in_sample || owner != "") next
  sym = frame_symbol($0)
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
}
