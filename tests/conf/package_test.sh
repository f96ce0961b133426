#!/usr/bin/env bash
# Builds the .deb with cpack, unpacks it into a scratch root (dpkg-deb -x, not installed on this
# machine) and checks its files, conffiles, dependencies and that the unpacked agent runs.
set -euo pipefail
build=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -G DEB -B "$scratch/out" >/dev/null)
deb=$(ls "$scratch"/out/sluice_*_amd64.deb)
dpkg-deb -x "$deb" "$scratch/root"
dpkg-deb -e "$deb" "$scratch/control"
fail() { echo "package_test: $*" >&2; exit 1; }
for f in usr/bin/sluice usr/bin/sluice-loadgen usr/bin/sluice-kafka-mock etc/sluice/agent.properties \
         etc/sluice/agent.yaml etc/default/sluice lib/systemd/system/sluice.service lib/systemd/system/sluice@.service \
         usr/lib/sysctl.d/99-sluice.conf usr/lib/sluice/tune.sh usr/share/doc/sluice/README.md \
         usr/share/doc/sluice/docs/memory.md usr/share/doc/sluice/REFERENCE.md usr/share/doc/sluice/copyright usr/share/doc/sluice/grafana-dashboard.json usr/share/man/man1/sluice.1.gz \
         usr/share/man/man1/sluice-loadgen.1.gz usr/share/man/man1/sluice-kafka-mock.1.gz; do
  [ -e "$scratch/root/$f" ] || fail "missing /$f"
done
for f in /etc/sluice/agent.properties /etc/sluice/agent.yaml /etc/default/sluice; do
  grep -qx "$f" "$scratch/control/conffiles" || fail "$f is not a conffile"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libuv1 adduser; do [[ "$depends" == *"$lib"* ]] || fail "Depends lacks $lib: $depends"; done
# librdkafka is linked in (unless built with -DSLUICE_SYSTEM_RDKAFKA=ON): no package of it needed,
# and none of the programs loads one.
if [ "${2:-}" != system-rdkafka ]; then
  [[ "$depends" != *librdkafka* ]] || fail "Depends names librdkafka: $depends"
  for program in sluice sluice-loadgen sluice-kafka-mock; do
    ! ldd "$scratch/root/usr/bin/$program" | grep -q rdkafka || fail "$program loads a shared librdkafka"
  done
  pinned=$(sed -n 's/^version=\([^-+~]*\).*/\1/p' "$(dirname "$0")/../../.ci/librdkafka.pin")
  "$scratch/root/usr/bin/sluice" --version | grep -qF "(librdkafka $pinned)" ||
    fail "sluice --version does not name librdkafka $pinned: $("$scratch/root/usr/bin/sluice" --version)"
fi
grep -q "adduser --system" "$scratch/control/postinst" || fail "postinst does not create the user"
file "$scratch/root/usr/bin/sluice" | grep -q "stripped" || fail "binaries are not stripped"
"$scratch/root/usr/bin/sluice" --version | grep -q "sluice" || fail "the unpacked agent does not run"
"$scratch/root/usr/bin/sluice" --check -f "$scratch/root/etc/sluice/agent.yaml" -n tier2 >/dev/null 2>&1 ||
  fail "the packaged configuration does not pass --check"
# The manual comes from the option table --help prints: every option of --help is in it.
page=$(zcat "$scratch/root/usr/share/man/man1/sluice.1.gz")
for option in $("$scratch/root/usr/bin/sluice" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
  grep -qF -- "${option//-/\\-}" <<<"$page" || fail "man sluice lacks $option"
done
grep -q '^\.SH SIGNALS' <<<"$page" || fail "man sluice has no SIGNALS section"
# Debian's policy checker: nothing to report (root is only a warning about how it runs).
lintian_out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v 'running with root privileges' || true)
[ -z "$lintian_out" ] || fail "lintian: $lintian_out"
echo "package_test: $(basename "$deb") ok ($(du -k "$deb" | cut -f1) KiB)"
