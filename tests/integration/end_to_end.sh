#!/usr/bin/env bash
# End to end: edgetapd with a two-camera configuration, `edgetap tail` receiving
# messages from both, `check-config` rejecting a bad file with status 78, and a
# clean shutdown on SIGTERM within a second.
# usage: end_to_end.sh EDGETAPD EDGETAP SOURCE_DIR
set -euo pipefail
edgetapd=$1 edgetap=$2
# edgetapd refuses to run as root unless told to; CI containers often are root.
as_root=(); [ "$(id -u)" -ne 0 ] || as_root=(--allow-root)
work=$(mktemp -d)
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/daemon.log" ] && sed 's/^/  daemon: /' "$work/daemon.log" >&2; exit 1; }

cat > "$work/edgetap.yaml" <<YAML
publisher: {socket: $work/tracks.sock}
control: {socket: $work/control.sock}
metrics: {listen: ""}
defaults:
  tracker: klt
  model_size: [128, 96]
  queries: {grid: [6, 4]}
cameras:
  - name: north
    source: test:pinwheel?width=320&height=240&fps=20&speed=1
  - name: south
    source: test:ball?width=320&height=240&fps=20
YAML

"$edgetap" check-config "$work/edgetap.yaml" || fail "check-config rejected a good file"
printf 'cameras:\n  - name: x\n    source: test:ball\n    budget_ms: -5\n' > "$work/bad.yaml"
set +e
"$edgetap" check-config "$work/bad.yaml" 2> "$work/bad.err"; status=$?
"$edgetapd" "${as_root[@]}" --config "$work/bad.yaml" 2> "$work/bad-daemon.err"; daemon_status=$?
set -e
[ "$status" -eq 78 ] || fail "check-config exit status $status, expected 78"
[ "$daemon_status" -eq 78 ] || fail "edgetapd exit status $daemon_status on a bad config, expected 78"
grep -q "bad.yaml:4:16: cameras\[0\] (camera 'x').budget_ms" "$work/bad.err" || fail "message lacks file:line:key: $(cat "$work/bad.err")"

"$edgetapd" "${as_root[@]}" --config "$work/edgetap.yaml" > "$work/daemon.log" 2>&1 &
daemon_pid=$!
"$edgetap" tail --socket "$work/tracks.sock" --wait 10 --count 40 --raw > "$work/tail.out" || fail "tail failed"
for camera in north south; do
  grep -q "\"camera\":\"$camera\"" "$work/tail.out" || fail "no message from camera $camera"
done
python3 - "$work/tail.out" <<'PY' || fail "malformed messages"
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    assert m["v"] == 1 and m["type"] == "tracks", m
    assert m["size"] == [320, 240], m["size"]
    assert all(0 <= p["x"] < 320 and 0 <= p["y"] < 240 for p in m["points"] if not p["lost"]), m
PY

# Selecting one camera with a hello line.
"$edgetap" tail --socket "$work/tracks.sock" --camera south --count 5 --raw > "$work/south.out" || fail "tail --camera failed"
grep -q '"camera":"north"' "$work/south.out" && fail "tail --camera south received north"

start=$(date +%s%N)
kill -TERM "$daemon_pid"
wait "$daemon_pid"; status=$?
daemon_pid=""
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$status" -eq 0 ] || fail "edgetapd exited with $status after SIGTERM"
echo "edgetapd stopped in ${elapsed_ms} ms after SIGTERM"
[ ! -e "$work/tracks.sock" ] || fail "the socket file was left behind"
echo "PASS"
