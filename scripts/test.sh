#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): installs the dependencies, builds the
# CPU-only configuration with warnings as errors, and runs the whole test suite.
# Pass --sanitize to run the suite under AddressSanitizer + UBSan instead.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=cpu
[ "${1:-}" = "--sanitize" ] && preset=sanitize
scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -j2
EDGETAP_PACKAGE_TEST=1 ctest --preset "$preset" -L package   # packaging/test-package.sh: builds and tests the .deb
