#!/usr/bin/env bash
# Checks the edgetapd unit and the sysusers snippet without systemd as PID 1:
#   packaging/verify-unit.sh EDGETAPD [UNIT [MANDIR]]
# EDGETAPD: the daemon binary to verify against (systemd-analyze verify wants
# ExecStart's program to exist, so a copy of UNIT points at it); UNIT: default
# packaging/systemd/edgetapd.service; MANDIR: where the man pages named in
# Documentation= are (checked when given, e.g. an installed tree's
# usr/share/man). Also fails when the exposure score rises above the recorded
# one, or when a setting that breaks CUDA or GStreamer creeps in.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: packaging/verify-unit.sh EDGETAPD [UNIT [MANDIR]]" >&2; exit 2; }
binary=$(realpath "$1")
unit=${2:-$here/systemd/edgetapd.service}
mandir=${3:-}
# packaging/README.md records the exposure (1.6); a change that raises it
# above this fails here and should update the README with the reason.
max_exposure=16

[ -x "$binary" ] || { echo "verify-unit: $binary is not an executable" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "verify-unit: systemd-analyze missing (apt install systemd)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep -q '^ExecStart=/usr/bin/edgetapd ' "$unit" || { echo "verify-unit: $unit: ExecStart is not /usr/bin/edgetapd" >&2; exit 1; }
sed "s#^ExecStart=/usr/bin/edgetapd #ExecStart=$binary #" "$unit" >"$tmp/edgetapd.service"

if [ -n "$mandir" ]; then
  MANPATH=$mandir systemd-analyze verify "$tmp/edgetapd.service"
else
  systemd-analyze verify --man=no "$tmp/edgetapd.service"
fi
echo "verify-unit: systemd-analyze verify: ok"

# Settings that must stay as they are; each line: pattern, reason.
fail=0
require() {  # require PATTERN REASON: PATTERN must match a line of the unit
  grep -Eq "^$1\$" "$unit" || { echo "verify-unit: missing '$1': $2" >&2; fail=1; }
}
forbid() {   # forbid PATTERN REASON: PATTERN must match no line of the unit
  if grep -Eq "^$1" "$unit"; then echo "verify-unit: '$1' is set: $2" >&2; fail=1; fi
}
require 'Type=notify' 'edgetapd reports READY/RELOADING/STOPPING over sd_notify'
require 'WatchdogSec=[0-9]+s?' 'the main loop pings the watchdog'
require 'RestartPreventExitStatus=78' 'a bad configuration (exit 78) must not restart forever'
require 'DevicePolicy=closed' 'device access is an explicit list'
require 'DeviceAllow=char-nvidia rw' '/dev/nvidia0..N and /dev/nvidiactl for CUDA (open kernel modules)'
require 'DeviceAllow=char-nvidia-frontend rw' '/dev/nvidia0..N and /dev/nvidiactl for CUDA (proprietary modules)'
require 'DeviceAllow=char-nvidia-uvm rw' '/dev/nvidia-uvm for CUDA'
require 'DeviceAllow=char-video4linux rw' '/dev/video* for V4L2 cameras'
require 'RuntimeDirectory=edgetap' '/run/edgetap holds the sockets'
require 'StateDirectory=edgetap' '/var/lib/edgetap holds control.state_file, the points added at run time'
require 'ProtectSystem=strict' 'the file system is read-only to the service'
require 'LimitNOFILE=[0-9]+' 'a flood of connections ends at a known fd limit'
require 'MemoryMax=[0-9]+[KMGT]?' 'a leak ends in a restart, not a starved host'
require 'TasksMax=[0-9]+' 'a runaway thread count ends at a known limit'
forbid 'PrivateDevices=(yes|true|on|1)' 'a private /dev has no /dev/nvidia*: CUDA finds no device'
forbid 'MemoryDenyWriteExecute=(yes|true|on|1)' 'the CUDA driver JIT and GStreamer ORC need W+X memory'
forbid 'ProcSubset=pid' 'CUDA reads /proc/driver/nvidia'
forbid 'PrivateUsers=(yes|true|on|1)' 'video/render group access to devices needs the real groups'
[ $fail -eq 0 ] || exit 1
echo "verify-unit: required and forbidden settings: ok"

if ! systemd-analyze security --offline=true --threshold=$max_exposure "$tmp/edgetapd.service" >"$tmp/security.txt"; then
  tail -n 1 "$tmp/security.txt" >&2
  echo "verify-unit: exposure above $((max_exposure / 10)).$((max_exposure % 10))" >&2
  exit 1
fi
echo "verify-unit: $(tail -n 1 "$tmp/security.txt" | sed 's/^→ //')"

systemd-sysusers --dry-run --root="$tmp" "$here/systemd/edgetap.sysusers" >"$tmp/sysusers.txt" 2>&1 ||
  { cat "$tmp/sysusers.txt" >&2; echo "verify-unit: edgetap.sysusers is invalid" >&2; exit 1; }
for expected in "Creating user 'edgetap'" "Creating group 'video'" "Creating group 'render'"; do
  grep -q "$expected" "$tmp/sysusers.txt" || { cat "$tmp/sysusers.txt" >&2; echo "verify-unit: sysusers: no \"$expected\"" >&2; exit 1; }
done
echo "verify-unit: edgetap.sysusers: ok"
