#!/usr/bin/env bash
# Debian's rsyslog, syslog-ng or haproxy unpacked beside the build, not installed (installing would start a
# system service, and the two conflict): what the tests use as real senders and the benchmark as
# peers. Idempotent; prints the root the programs are under.
#
#   tests/peers/unpack.sh rsyslog    # build/peers/rsyslog/usr/sbin/rsyslogd, its modules in usr/lib/x86_64-linux-gnu/rsyslog
#   tests/peers/unpack.sh syslog-ng  # build/peers/syslog-ng/usr/sbin/syslog-ng
#   tests/peers/unpack.sh haproxy    # build/peers/haproxy/usr/sbin/haproxy (the load balancer in front of agents)
#
# Their shared libraries come from Debian (installed with .ci/install-deps). On failure it says
# which command failed and what it printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
peer=${1:-}
case "$peer" in
  rsyslog) libraries=(libestr0 libfastjson4 liblognorm5 libssl3 librelp0)
           packages=(rsyslog rsyslog-kafka rsyslog-openssl rsyslog-relp) ;;
  syslog-ng) libraries=(libivykis0 libnet1 libjson-c5 libwrap0 libpcre3)
             packages=(syslog-ng-core syslog-ng-mod-rdkafka) ;;
  haproxy) libraries=(liblua5.3-0 libopentracing-c-wrapper0 libpcre2-8-0 libssl3 libsystemd0 libcrypt1)
           packages=(haproxy) ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
root=$PWD/build/peers/$peer
stamp="$root/.unpacked ${packages[*]}"  # a stamp per package set: adding a package unpacks again
if [ ! -f "$root/.unpacked" ] || [ "$(cat "$root/.unpacked")" != "$stamp" ]; then
  bash .ci/install-deps "${libraries[@]}" >&2
  rm -rf "$root"
  mkdir -p "$root/debs"
  if ! (cd "$root/debs" && apt-get download "${packages[@]}") >"$root/download.log" 2>&1; then
    echo "unpack: apt-get download ${packages[*]} failed:" >&2
    cat "$root/download.log" >&2
    exit 1
  fi
  for deb in "$root"/debs/*.deb; do dpkg -x "$deb" "$root"; done
  echo "$stamp" >"$root/.unpacked"
fi
echo "$root"
