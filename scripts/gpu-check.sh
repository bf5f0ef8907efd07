#!/usr/bin/env bash
# Runs the CUDA engine's parity tests, memory checks and benchmarks on a GPU
# host, from programs built by scripts/gpu-build.sh (carried in build/gpu-bin).
# Run from the source tree's root; logs go to OUT_DIR.
#   usage: scripts/gpu-check.sh OUT_DIR [tests] [sanitize] [bench] [ncu]
set -uo pipefail
out="$1"; shift
bin=build/gpu-bin
export EDGETAP_SOURCE_DIR="$PWD"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
status=0
for step in "$@"; do
  case "$step" in
    tests)
      for t in track-ops encoder session; do
        "$bin/edgetap-gpu-test-$t" --gtest_color=no >"$out/test-$t.log" 2>&1 || status=1
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[fp|FAILED|Failure|error" "$out/test-$t.log" | head -40
      done ;;
    sanitize)
      # Memory errors and races on the kernels and on whole frames of the tiny networks.
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-track-ops" >"$out/memcheck-track-ops.log" 2>&1 || status=1
      compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/edgetap-gpu-test-track-ops" >"$out/racecheck-track-ops.log" 2>&1 || status=1
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-session" --gtest_filter='*tiny*:CudaSession.*' >"$out/memcheck-session.log" 2>&1 || status=1
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-encoder" >"$out/memcheck-encoder.log" 2>&1 || status=1
      tail -n 3 "$out"/memcheck-*.log "$out"/racecheck-*.log ;;
    bench)
      for m in small large; do
        "$bin/edgetap-bench" --model models/edgetap-$m.safetensors 2>&1 | tee "$out/bench-$m.log"
      done ;;
    ncu)
      # DRAM bytes and time of every kernel of a few streamed frames at 1024 points.
      for p in fp16 fp32; do
        ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum --csv \
          "$bin/edgetap-bench" --model models/edgetap-small.safetensors --precision $p --workloads w2 \
          --w2-points 1024 --w2-frames 4 >"$out/ncu-small-$p.csv" 2>"$out/ncu.err" || status=1
      done
      tail -n 2 "$out/ncu.err" ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
exit $status
