#!/usr/bin/env bash
# Quick start, step 1: installs the dependencies, builds, and tracks the bundled
# demo clip with the EdgeTAP network (on the GPU where the edgetap-cuda plugin
# and a device are present, else on the CPU, where the ladder steps down to keep
# the clip's rate), publishing on a socket while `edgetap tail`
# listens; prints a per-camera summary and writes out/demo-tracks.png.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
edgetap=build/default/cli/edgetap
socket="${XDG_RUNTIME_DIR:-/tmp}/edgetap-demo.sock"
"$edgetap" tail --socket "$socket" --wait 10 --count 3 &
tail_pid=$!
"$edgetap" run --socket "$socket" --pace realtime "$@"
wait "$tail_pid" || true
