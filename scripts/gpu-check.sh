#!/usr/bin/env bash
# Runs the CUDA engine's parity tests, memory checks and benchmarks on a GPU
# host, from programs built by scripts/gpu-build.sh (carried in build/gpu-bin).
# Run from the source tree's root; logs go to OUT_DIR.
#   usage: scripts/gpu-check.sh OUT_DIR [tests] [stress] [sanitize] [bench] [refine] [fused] [t4] [ncu]
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
      for t in track-ops encoder session refinement; do
        "$bin/edgetap-gpu-test-$t" --gtest_color=no >"$out/test-$t.log" 2>&1 || status=1
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[fp|FAILED|Failure|error" "$out/test-$t.log" | head -40
      done ;;
    stress)
      # Sessions on 6 camera threads for 30 s (build, stream, grow, switch rungs, destroy), checked
      # against single-threaded runs; then 4 threads for 3 s under memcheck and 2 for 1 s under racecheck (its hazard checks make every kernel slow).
      "$bin/edgetap-gpu-test-concurrent-sessions" --gtest_color=no >"$out/stress.log" 2>&1 || status=1
      EDGETAP_STRESS_THREADS=4 EDGETAP_STRESS_SECONDS=3 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bin/edgetap-gpu-test-concurrent-sessions" >"$out/memcheck-stress.log" 2>&1 || status=1
      EDGETAP_STRESS_THREADS=2 EDGETAP_STRESS_SECONDS=1 compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$bin/edgetap-gpu-test-concurrent-sessions" >"$out/racecheck-stress.log" 2>&1 || status=1
      grep -E "rung visits|PASSED|FAILED|Failure" "$out/stress.log" | head -20
      tail -n 3 "$out/memcheck-stress.log" "$out/racecheck-stress.log" ;;
    sanitize)
      # Memory errors and races on the kernels and on whole frames of the tiny networks.
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-track-ops" >"$out/memcheck-track-ops.log" 2>&1 || status=1
      compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/edgetap-gpu-test-track-ops" >"$out/racecheck-track-ops.log" 2>&1 || status=1
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-session" --gtest_filter='*tiny*:CudaSession.*' >"$out/memcheck-session.log" 2>&1 || status=1
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-encoder" --gtest_filter='*tiny*' >"$out/memcheck-encoder.log" 2>&1 || status=1
      compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/edgetap-gpu-test-refinement" >"$out/memcheck-refinement.log" 2>&1 || status=1
      tail -n 3 "$out"/memcheck-*.log "$out"/racecheck-*.log ;;
    bench)
      "$bin/edgetap-bench" --workloads ceilings --precision fp16 2>&1 | grep ceiling | tee "$out/ceilings.log"
      for m in small large; do
        "$bin/edgetap-bench" --model models/edgetap-$m.safetensors >"$out/bench-$m.log" 2>&1 || status=1
        grep -E "^W|stages" "$out/bench-$m.log"
      done ;;
    refine)
      # Template refinement per frame on the GPU against one CPU thread (frame conversion included),
      # then the published session (network + the model's support grid + refinement) beside the
      # network alone (W2's lines, "published").
      "$bin/edgetap-refine-bench" --aligner cuda --points 64 --points 256 --points 1024 >"$out/refine-cuda.log" 2>&1 || status=1
      "$bin/edgetap-refine-bench" --aligner cpu --threads 1 --points 256 --points 1024 >"$out/refine-cpu.log" 2>&1 || status=1
      tail -n 4 "$out/refine-cuda.log" "$out/refine-cpu.log"
      "$bin/edgetap-bench" --model models/edgetap-large.safetensors --precision fp16 --workloads w2 \
        --w2-points 256,1024 >"$out/bench-large-refined.log" 2>&1 || status=1
      grep -E "^W2|published" "$out/bench-large-refined.log"
      ncu --clock-control none --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        -k regex:'grey_frame_kernel|capture_kernel|align_kernel' -c 12 \
        "$bin/edgetap-refine-bench" --aligner cuda --points 1024 --frames 4 --runs 1 >"$out/ncu-refine-1024.csv" 2>"$out/ncu-refine.err" || status=1
      grep -E "align_kernel|grey_frame_kernel|capture_kernel" "$out/ncu-refine-1024.csv" | head -12 ;;
    fused)
      # The fused FP16 kernels (engine/cuda/src/fused_kernels.hpp; unset: FP16's default; =1 all of
      # them, the tracker program included; a comma list of cross_attention, products and program;
      # =0 none): their parity tests and the tensor-core correlation's, the session tests (tiny
      # networks and edgetap-large at 64 points) and 10 s of the concurrent sessions with all of them,
      # then edgetap-large FP16 W1, W2 and memory for the default, the tile products without the
      # program and all of them (the same programs), two rounds interleaved.
      "$bin/edgetap-gpu-test-track-ops" --gtest_color=no \
        --gtest_filter='CrossAttention*:TileProducts*:*TrackerProgram*:*OnTensorCores*' \
        >"$out/test-fused-kernels.log" 2>&1 || status=1
      EDGETAP_CUDA_FUSED=1 "$bin/edgetap-gpu-test-session" --gtest_color=no \
        --gtest_filter='CudaSession.*:*SessionParity*/edgetap_tiny*:*SessionParity*/edgetap_large_64*' \
        >"$out/test-session-fused.log" 2>&1 || status=1
      EDGETAP_CUDA_FUSED=1 EDGETAP_STRESS_SECONDS=10 "$bin/edgetap-gpu-test-concurrent-sessions" --gtest_color=no \
        >"$out/stress-fused.log" 2>&1 || status=1
      grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|max\|diff|rung visits" "$out/test-fused-kernels.log" \
        "$out/test-session-fused.log" "$out/stress-fused.log" | head -30
      for round in 1 2; do
        for fused in default cross_attention,products 1; do
          (if [ "$fused" = default ]; then unset EDGETAP_CUDA_FUSED; else export EDGETAP_CUDA_FUSED=$fused; fi
           "$bin/edgetap-bench" --model models/edgetap-large.safetensors --precision fp16 \
             --workloads w1,w2,memory --w2-points 256,1024) >"$out/bench-fused-$fused-$round.log" 2>&1 || status=1
          echo "EDGETAP_CUDA_FUSED=$fused, round $round:"
          grep -E "^W|published|MiB" "$out/bench-fused-$fused-$round.log"
        done
      done ;;
    t4)
      # The engine on about 40 of the card's SMs, a T4's count, through MPS (no device setting changes;
      # memory bandwidth and L2 stay the card's: bench/NOTES-gpu.md "T4 estimate" adds the byte floor).
      # FP16's default fused kernels, then all of them.
      nvidia-cuda-mps-control -d && sleep 1
      for fused in default 1; do
        (if [ "$fused" = default ]; then unset EDGETAP_CUDA_FUSED; else export EDGETAP_CUDA_FUSED=$fused; fi
         CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30 "$bin/edgetap-bench" --model models/edgetap-large.safetensors \
           --precision fp16 --workloads w1,w2 --w2-points 256,1024) >"$out/bench-t4-sms-$fused.log" 2>&1 || status=1
        echo "EDGETAP_CUDA_FUSED=$fused, about 40 SMs:"
        grep -E "^W|published" "$out/bench-t4-sms-$fused.log"
      done
      echo quit | nvidia-cuda-mps-control ;;
    ncu)
      # DRAM bytes and time of every kernel of 2 streamed frames (graph kernels included).
      for m in small large; do
        for points in 256 1024; do
          ncu --clock-control none --profile-from-start off --csv \
            --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
            "$bin/edgetap-bench" --model models/edgetap-$m.safetensors --precision fp16 --workloads profile \
            --w2-points $points --w2-frames 2 >"$out/ncu-$m-fp16-$points.csv" 2>"$out/ncu.err" || status=1
          echo "ncu $m fp16 $points points, per frame:"
          python3 bench/ncu_summary.py "$out/ncu-$m-fp16-$points.csv" --frames 2 | tail -n 1
        done
      done ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
exit $status
