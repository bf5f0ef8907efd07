#!/usr/bin/env bash
# Builds the CUDA engine's tests, benchmark and trace runner for a bare GPU host (core and
# the CUDA engine only, no BLAS: nothing the host lacks) into build/gpu, and
# gathers the programs in build/gpu-bin, the folder the device runs carry, with
# the CUDA engine plugin beside them (where edgetap-bench and edgetap-trace-run look first).
#   usage: scripts/gpu-build.sh [CUDA architectures, default "75-real;90-real"]
set -euo pipefail
cd "$(dirname "$0")/.."
archs="${1:-75-real;90-real}"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGETAP_CORE_ONLY=ON -DEDGETAP_CUDA=ON \
  -DEDGETAP_BLAS=OFF -DEDGETAP_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" >/dev/null
ninja -C build/gpu edgetap-gpu-test-track-ops edgetap-gpu-test-encoder edgetap-gpu-test-session \
  edgetap-gpu-test-refinement edgetap-gpu-test-concurrent-sessions edgetap_cuda_plugin edgetap-bench edgetap-refine-bench edgetap-trace-run
rm -rf build/gpu-bin && mkdir -p build/gpu-bin
cp build/gpu/engine/cuda/tests/edgetap-gpu-test-track-ops build/gpu/engine/cuda/tests/edgetap-gpu-test-encoder \
  build/gpu/engine/cuda/tests/edgetap-gpu-test-session build/gpu/engine/cuda/tests/edgetap-gpu-test-refinement \
  build/gpu/engine/cuda/tests/edgetap-gpu-test-concurrent-sessions build/gpu/lib/edgetap/libedgetap-cuda.so \
  build/gpu/bench/edgetap-bench build/gpu/bench/edgetap-refine-bench build/gpu/replay/edgetap-trace-run build/gpu-bin/
ls -la build/gpu-bin
