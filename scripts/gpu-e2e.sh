#!/usr/bin/env bash
# edgetapd end to end on a GPU host: capture -> queue -> CUDA session ->
# governor -> publisher in one process, as a subscriber sees it.
#
#   scripts/gpu-e2e.sh bundle        here (Debian 12, CUDA toolkit): builds edgetapd and the CUDA
#                                    engine plugin into build/e2e and packs them with the libraries
#                                    and GStreamer plugins a bare GPU host lacks into
#                                    build/e2e/bundle.tar.xz (carry that path to the host)
#   scripts/gpu-e2e.sh run OUT_DIR   there, from the source tree's root: unpacks the bundle and runs
#                                    the scenarios below, a summary in OUT_DIR/summary.txt
#
# Scenarios (each camera 30 fps, 32 x 32 = 1,024 points, the default GPU ladder:
# edgetap-large FP16 first, budget 33 ms, two subscribers):
#   one   1 camera (the GPU memory of one camera and of the process)
#   four  3 test patterns + the bundled clip looped: latency p50/p99, frames tracked
#         against captured, rung changes, GPU memory per added camera
#   many  16 cameras: the governor steps down, track ids kept across rung changes
#   many-connections 16 cameras, 32 hardware queues for the cameras' streams (CUDA_DEVICE_MAX_CONNECTIONS=32, 8 by default)
#   many-gated 16 cameras, every rung taking turns at the compute gate (EDGETAP_COMPUTE_GATE_EVERY_RUNG=1):
#         what the cameras' overlap on the GPU is worth
#   fault 4 cameras, EDGETAP_INJECT_CUDA_FAULT=600: one camera's session fails after
#         20 s; it falls back one rung and publishes again, the others keep their rate
#   starts 2, 4 and 16 cameras (starts-N: N cameras) started E2E_STARTS times each (default 10) for E2E_START_SECONDS
#         (default 8): aborts, failed rungs, frames captured but not tracked, those between two of a camera's
#         messages untracked beyond the queue's drops, and the range of the cameras' latency p99 over a start
# E2E_SECONDS (default 60) is each scenario's length, E2E_POINTS_SIDE (32) the grid's
# side, E2E_SCENARIOS (default "one four many fault starts") which run, E2E_LADDER (a
# YAML list of rungs) every camera's ladder instead of the default, E2E_DAEMON_ENV
# (NAME=VALUE ...) the daemon's environment.
# On a host without a GPU, EDGETAP_CUDA_PLUGIN naming another plugin (the test
# suite's stand-in) runs the same scenarios on the CPU engine, to try the script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bundle=$root/build/e2e/bundle.tar.xz

# Libraries the GPU host has of its own (glibc, the C++ runtime, NVIDIA's).
host_has='^(libc|libm|libdl|librt|libpthread|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnvidia-[a-z-]*)\.so'
# The GStreamer plugins the test patterns and the bundled clip need.
gst_plugins="coreelements playback typefindfunctions videotestsrc videoconvertscale videoconvert videoscale app avi jpeg"

pack() {
  cmake -S . -B build/e2e -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGETAP_CUDA=ON -DEDGETAP_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="75-real;90-real" >/dev/null
  ninja -C build/e2e edgetapd edgetap_cuda_plugin
  local stage=build/e2e/stage multiarch gst_dir
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  gst_dir=/usr/lib/$multiarch/gstreamer-1.0
  rm -rf "$stage" && mkdir -p "$stage/lib" "$stage/gst"
  cp build/e2e/daemon/edgetapd build/e2e/lib/edgetap/libedgetap-cuda.so "$stage/"
  for p in $gst_plugins; do [ -f "$gst_dir/libgst$p.so" ] && cp "$gst_dir/libgst$p.so" "$stage/gst/"; done
  cp "/usr/lib/$multiarch/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner" "$stage/"
  # The bundled clip is MPEG-4 part 2 (libav's decoder and FFmpeg are too big to carry):
  # the same frames as Motion JPEG, which the avi and jpeg plugins above decode.
  gst-launch-1.0 -q filesrc location=assets/demo/vtest-pedestrians.avi ! decodebin ! videoconvert ! \
    jpegenc quality=85 ! avimux ! filesink location="$stage/clip.avi"
  # The closure of everything above, less what the host has.
  for f in "$stage"/edgetapd "$stage"/libedgetap-cuda.so "$stage"/gst/*.so "$stage"/gst-plugin-scanner; do
    ldd "$f" | awk '/=> \// { print $3 }'
  done | sort -u | while read -r lib; do
    basename "$lib" | grep -Eq "$host_has" || cp -L "$lib" "$stage/lib/"
  done
  strip --strip-unneeded "$stage"/edgetapd "$stage"/libedgetap-cuda.so "$stage"/lib/*.so* "$stage"/gst/*.so 2>/dev/null || true
  tar -C "$stage" -cJf "$bundle" .
  echo "gpu-e2e: $(du -h "$bundle" | cut -f1) in ${bundle#"$root"/} ($(ls "$stage/lib" | wc -l) libraries)"
}

# camera NAME SOURCE: one camera of a scenario's configuration.
camera() {
  printf '  - {name: %s, source: "%s"}\n' "$1" "$2"
}

# configuration N: N cameras, the first three test patterns and the bundled clip, repeating.
configuration() {
  local n=$1 side=${E2E_POINTS_SIDE:-32} i
  local patterns=(ball smpte pinwheel snow)
  cat <<YAML
publisher: {socket: "$work/tracks.sock", subscriber_queue: 1024}
control: {socket: "$work/control.sock"}
metrics: {listen: ""}
defaults:
  tracker: edgetap
  model_size: [256, 256]
  budget_ms: 33${E2E_LADDER:+
  ladder: $E2E_LADDER}
  queries: {policy: grid, grid: [$side, $side], reseed: true}
  capture: {pace: realtime, at_eof: loop, queue: 4}
cameras:
YAML
  for ((i = 0; i < n; ++i)); do
    if ((i % 4 == 3)); then
      camera "cam$i" "file://$clip"
    else
      camera "cam$i" "test:${patterns[i % 4]}?width=640&height=480&fps=30&speed=2"
    fi
  done
}

gpu_memory_mib() {  # the daemon's GPU memory (MiB), or "" where nvidia-smi cannot tell
  command -v nvidia-smi >/dev/null || return 0
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
    awk -F', ' -v pid="$1" '$1 == pid { print $2 }'
}

cpu_load() {  # cpu_load PID SECONDS: the host's busy share and the process's cores over SECONDS
  python3 - "$1" "$2" <<'PY'
import os, sys, time
pid, seconds = sys.argv[1], float(sys.argv[2])
def host():
    f = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return sum(f), f[3] + f[4]  # all, idle + iowait
def proc():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime + stime
(t0, i0), p0 = host(), proc()
time.sleep(seconds)
(t1, i1), p1 = host(), proc()
hz, cores = os.sysconf("SC_CLK_TCK"), os.cpu_count()
print(f"host CPU busy {100 * (1 - (i1 - i0) / (t1 - t0)):.0f}% of {cores} cores, edgetapd {(p1 - p0) / hz / seconds:.1f} cores")
PY
}

thread_load() {  # thread_load PID SECONDS: the process's cores by thread name (digits folded), busiest first
  python3 - "$1" "$2" <<'PY'
import collections, os, re, sys, time
pid, seconds = sys.argv[1], float(sys.argv[2])
def sample():
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat.rsplit(")", 1)[1].split()
        out[tid] = (re.sub(r"[0-9]+", "#", name), int(f[11]) + int(f[12]))
    return out
a = sample(); time.sleep(seconds); b = sample()
load = collections.Counter()
for tid, (name, t) in b.items():
    load[name] += t - a.get(tid, (name, t))[1]
hz = os.sysconf("SC_CLK_TCK")
print("threads: " + ", ".join(f"{n} {v / hz / seconds:.2f}" for n, v in load.most_common(8)))
PY
}

control() {  # control REQUEST: one request on the control socket, the reply on stdout
  python3 - "$work/control.sock" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
for attempt in range(100):  # the control socket opens once every camera has started (16: several seconds)
    try:
        s.connect(sys.argv[1]); break
    except (FileNotFoundError, ConnectionRefusedError):
        time.sleep(0.1)
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
PY
}

# scenario NAME CAMERAS [ENV...]: runs edgetapd with the cameras for E2E_SECONDS and two subscribers.
scenario() {
  local name=$1 n=$2 seconds=${E2E_SECONDS:-60} pid split=""
  shift 2
  work=$out/$name
  mkdir -p "$work"
  configuration "$n" >"$work/edgetap.yaml"
  [ "$name" = fault ] && split=20
  env ${E2E_DAEMON_ENV:-} "$@" "${runner[@]}" "$work/edgetap.yaml" >"$work/edgetapd.log" 2>&1 &
  pid=$!
  python3 scripts/e2e_subscriber.py --socket "$work/tracks.sock" --seconds "$seconds" --out "$work/seen.json" \
    ${split:+--split-after "$split"} &
  local first=$!
  python3 scripts/e2e_subscriber.py --socket "$work/tracks.sock" --seconds "$seconds" --out "$work/seen-2.json" &
  local second=$!
  sleep $((seconds / 2))
  gpu_memory_mib "$pid" >"$work/gpu-mib.txt" || true
  cpu_load "$pid" 5 >"$work/cpu.txt" 2>/dev/null || true
  thread_load "$pid" 3 >"$work/threads.txt" 2>/dev/null || true
  wait "$first" "$second" || true
  control '{"cmd": "stats"}' >"$work/stats.json" || true
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || echo "edgetapd ($name) exited with status $?" >>"$work/edgetapd.log"
  python3 - "$work" "$name" "$n" <<'PY' | tee -a "$out/summary.txt"
import json, sys
work, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
seen = json.load(open(f"{work}/seen.json"))
stats = {c["name"]: c for c in json.load(open(f"{work}/stats.json")).get("cameras", [])}
mem = open(f"{work}/gpu-mib.txt").read().strip()
cpu = open(f"{work}/cpu.txt").read().strip()
print(f"== {name}: {n} cameras; daemon GPU memory {mem or '?'} MiB; mid-run {cpu or 'CPU load unknown'}")
try:
    print(open(f"{work}/threads.txt").read().strip())
except OSError:
    pass
for cam, s in seen.items():
    st = stats.get(cam, {})
    line = (f"{cam}: {s['messages']} msgs, {s.get('fps') or 0:.1f} fps, latency p50 {s['latency_ms_p50']:.1f} "
            f"p99 {s['latency_ms_p99']:.1f} ms (second half {s.get('latency_ms_p99_second_half') or 0:.1f}), tracked {st.get('frames_tracked', '?')} of "
            f"{st.get('frames_captured', '?')} captured ({st.get('queue_drops', '?')} dropped, {st.get('frames_strided', '?')} strided, "
            f"{s.get('frames_untracked', '?')} untracked between messages), "
            f"tracker {st.get('tracker_ms_mean', 0):.1f} ms, rung changes {st.get('rung_changes', '?')} "
            f"(failures {st.get('rung_failures', '?')}), rungs {' -> '.join(s['rungs'])}, "
            f"longest gap {s['longest_gap_s']:.2f} s")
    if s["ids_lost_at_rung_change"]:
        line += f", IDS LOST at {s['ids_lost_at_rung_change']}"
    if "fps_before_split" in s:
        line += f", fps before/after the fault {s['fps_before_split'] or 0:.1f}/{s['fps_after_split'] or 0:.1f}"
    print(line)
PY
  grep -E "failed|error" "$work/edgetapd.log" | head -5 | tee -a "$out/summary.txt" || true
}

# starts N: starts edgetapd with N cameras E2E_STARTS times, each for E2E_START_SECONDS, one
# subscriber; counts the runs that ended other than by the TERM sent, and sums each run's stats.
starts() {
  local n=$1 times=${E2E_STARTS:-10} seconds=${E2E_START_SECONDS:-8} i pid rc aborts=0
  work=$out/starts-$n
  mkdir -p "$work"
  configuration "$n" >"$work/edgetap.yaml"
  for ((i = 1; i <= times; ++i)); do
    "${runner[@]}" "$work/edgetap.yaml" >"$work/edgetapd-$i.log" 2>&1 &
    pid=$!
    python3 scripts/e2e_subscriber.py --socket "$work/tracks.sock" --seconds "$seconds" --out "$work/seen-$i.json" || true
    control '{"cmd": "stats"}' >"$work/stats-$i.json" || echo '{}' >"$work/stats-$i.json"
    kill -TERM "$pid" 2>/dev/null || true
    rc=0; wait "$pid" || rc=$?
    if ((rc != 0)); then aborts=$((aborts + 1)); echo "start $i: edgetapd exited with status $rc" >>"$work/aborts.txt"; fi
  done
  python3 - "$work" "$n" "$times" "$aborts" <<'PY' | tee -a "$out/summary.txt"
import json, sys
work, n, times, aborts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
captured = tracked = drops = strided = failures = changes = lost = untracked = 0
rungs = set()
p99s, late, first = [], [], {}
for i in range(1, times + 1):
    try:
        cams = json.load(open(f"{work}/stats-{i}.json")).get("cameras", [])
        seen = json.load(open(f"{work}/seen-{i}.json"))
    except (OSError, ValueError):
        continue
    for c in cams:
        captured += c.get("frames_captured", 0); tracked += c.get("frames_tracked", 0)
        drops += c.get("queue_drops", 0); strided += c.get("frames_strided", 0)
        failures += c.get("rung_failures", 0); changes += c.get("rung_changes", 0)
    for s in seen.values():
        rungs.update(s["rungs"]); lost += len(s["ids_lost_at_rung_change"])
        untracked += s.get("frames_untracked", 0)
        if s.get("latency_ms_p99") is not None:
            p99s.append(s["latency_ms_p99"])
        late += s.get("over_budget_at", [])
        for k, f in enumerate(s.get("first_messages", [])):
            first.setdefault(k, []).append(f)
print(f"== starts: {n} cameras x {times} starts: {aborts} aborts, {failures} failed rungs, {changes} rung changes, "
      f"{tracked} of {captured} captured frames tracked ({drops} dropped by the queue, {strided} strided, "
      f"the rest in flight at the stats request; {untracked} frames between two of a camera's messages untracked "
      f"beyond the queue's drops), ids lost at a rung change {lost} times; rungs seen: {', '.join(sorted(rungs))}; "
      f"latency p99 of a camera over a start {min(p99s, default=0):.1f}-{max(p99s, default=0):.1f} ms")
late.sort()
if late:
    print(f"   messages over the budget: {len(late)}, at a camera's message {late[0]}-{late[-1]} (median {late[len(late) // 2]})")
for k in sorted(first):
    lat = sorted(f["latency_ms"] for f in first[k]); trk = sorted(f["tracker_ms"] for f in first[k])
    print(f"   message {k}: latency median {lat[len(lat) // 2]:.1f} max {lat[-1]:.1f} ms, tracker median "
          f"{trk[len(trk) // 2]:.1f} max {trk[-1]:.1f} ms, queue drops so far max {max(f['queue_drops'] for f in first[k])}")
PY
}

run() {
  out=$(realpath -m "$1")
  mkdir -p "$out"
  local unpacked=/tmp/edgetap-e2e
  rm -rf "$unpacked" && mkdir -p "$unpacked" && tar -C "$unpacked" -xJf "$bundle"
  export LD_LIBRARY_PATH=$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GST_PLUGIN_SYSTEM_PATH=$unpacked/gst GST_PLUGIN_SCANNER=$unpacked/gst-plugin-scanner
  export GST_REGISTRY=$unpacked/registry.bin EDGETAP_DATA_DIR=$root
  export EDGETAP_CUDA_PLUGIN=${EDGETAP_CUDA_PLUGIN:-$unpacked/libedgetap-cuda.so}
  clip=$unpacked/clip.avi
  runner=("$unpacked/edgetapd" --allow-root --config)
  "$unpacked/edgetapd" --help | grep -q -- --allow-root || runner=("$unpacked/edgetapd" --config)
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/summary.txt"
  for name in ${E2E_SCENARIOS:-one four many fault starts}; do
    case "$name" in
      one) scenario one 1 ;;
      four) scenario four 4 ;;
      many) scenario many 16 ;;
      many-gated) scenario many-gated 16 EDGETAP_COMPUTE_GATE_EVERY_RUNG=1 ;;
      many-connections) scenario many-connections 16 CUDA_DEVICE_MAX_CONNECTIONS=32 ;;
      fault) scenario fault 4 EDGETAP_INJECT_CUDA_FAULT=600 ;;
      starts) starts 2; starts 4; starts 16 ;;
      starts-*) starts "${name#starts-}" ;;
      *) echo "gpu-e2e: unknown scenario $name" >&2; exit 2 ;;
    esac
  done
}

case "${1:-}" in
  bundle) pack ;;
  run) [ $# -eq 2 ] || { echo "usage: scripts/gpu-e2e.sh run OUT_DIR" >&2; exit 2; }; run "$2" ;;
  *) echo "usage: scripts/gpu-e2e.sh bundle | run OUT_DIR" >&2; exit 2 ;;
esac
