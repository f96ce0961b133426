#!/usr/bin/env bash
# Applies, checks or reverts Sluice's kernel tuning profile (sysctl/99-sluice.conf).
#
#   sysctl/tune.sh apply  [--dry-run] [--root DIR] [--profile FILE]  record current values, apply the profile
#   sysctl/tune.sh check  [--root DIR] [--profile FILE]              current vs recommended; exit 1 if under-tuned
#   sysctl/tune.sh revert [--dry-run] [--root DIR]                   restore the values recorded by apply
#
# --root DIR reads and writes DIR/proc/sys (and keeps its record in DIR/var/lib/sluice), so that
# tests exercise every mode without touching the host. "Under-tuned" means below the profile;
# a value above it is left alone and counts as fine (except ip_local_port_range, a range).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-}
[ $# -gt 0 ] && shift
root="" dry_run=0 profile="$here/99-sluice.conf"
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --profile) profile=$2; shift 2 ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
  esac
done
case "$mode" in apply|check|revert) ;; *) sed -n '2,12p' "$0" >&2; exit 2 ;; esac
state_dir="$root/var/lib/sluice"
state="$state_dir/sysctl-before-apply.conf"

path_of() { echo "$root/proc/sys/${1//.//}"; }
read_value() { tr -s ' \t' '  ' < "$(path_of "$1")" | sed 's/^ //; s/ $//'; }
profile_entries() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=[[:space:]]*/=/' -e 's/[[:space:]]*$//' "$1"; }

# True when `current` satisfies `wanted` (every field at least as large; a port range at least as wide).
satisfies() {
  local key=$1 current=$2 wanted=$3
  if [ "$key" = net.ipv4.ip_local_port_range ]; then
    read -r cl ch <<<"$current"; read -r wl wh <<<"$wanted"
    [ "$cl" -le "$wl" ] && [ "$ch" -ge "$wh" ]
    return
  fi
  local -a c w
  read -r -a c <<<"$current"; read -r -a w <<<"$wanted"
  [ ${#c[@]} -eq ${#w[@]} ] || return 1
  for i in "${!w[@]}"; do [ "${c[$i]}" -ge "${w[$i]}" ] || return 1; done
}

write_value() {
  local key=$1 value=$2
  if [ $dry_run -eq 1 ]; then echo "would set $key = $value"; return; fi
  printf '%s\n' "$value" > "$(path_of "$key")" || { echo "tune.sh: cannot set $key (are you root?)" >&2; return 1; }
  echo "set $key = $value"
}

case "$mode" in
  check)
    under=0
    printf '%-32s %-28s %-28s %s\n' key current recommended status
    while IFS='=' read -r key wanted; do
      if [ ! -e "$(path_of "$key")" ]; then
        printf '%-32s %-28s %-28s %s\n' "$key" "(absent)" "$wanted" "not in this kernel"; continue
      fi
      current=$(read_value "$key")
      if satisfies "$key" "$current" "$wanted"; then status=ok; else status=UNDER; under=1; fi
      printf '%-32s %-28s %-28s %s\n' "$key" "$current" "$wanted" "$status"
    done < <(profile_entries "$profile")
    nofile=$(ulimit -n)
    echo "file descriptors for this shell: $nofile (the service's own limit is LimitNOFILE=2000000 in sluice.service)"
    [ $under -eq 0 ] && echo "tuned" || echo "under-tuned: run sysctl/tune.sh apply"
    exit $under ;;
  apply)
    if [ $dry_run -eq 0 ]; then
      mkdir -p "$state_dir"
      [ -e "$state" ] || while IFS='=' read -r key _; do
        [ -e "$(path_of "$key")" ] && echo "$key=$(read_value "$key")"
      done < <(profile_entries "$profile") > "$state"
    fi
    while IFS='=' read -r key wanted; do
      [ -e "$(path_of "$key")" ] || { echo "skip $key: not in this kernel"; continue; }
      current=$(read_value "$key")
      if satisfies "$key" "$current" "$wanted"; then echo "keep $key = $current (already at least $wanted)"; continue; fi
      write_value "$key" "$wanted"
    done < <(profile_entries "$profile")
    [ $dry_run -eq 1 ] || echo "recorded the previous values in $state (sysctl/tune.sh revert restores them)" ;;
  revert)
    [ -e "$state" ] || { echo "tune.sh: nothing to revert: $state does not exist (apply records it)" >&2; exit 1; }
    while IFS='=' read -r key value; do write_value "$key" "$value"; done < "$state"
    [ $dry_run -eq 1 ] || rm -f "$state" ;;
esac
