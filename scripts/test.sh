#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): installs the dependencies, builds the
# CPU-only configuration with warnings as errors, runs the whole test suite, the
# 10-minute soak, then the fuzz targets for a fixed count of inputs each (scripts/fuzz.sh).
# Pass --sanitize to run the suite under AddressSanitizer + UBSan instead, or
# --tsan under ThreadSanitizer (either without the fuzz step: docs/RELIABILITY.md).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=cpu
case "${1:-}" in
  --sanitize) preset=sanitize ;;
  --tsan) preset=tsan ;;
  "") ;;
  *) echo "usage: $0 [--sanitize | --tsan]" >&2; exit 2 ;;
esac
scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -j2 -LE soak   # the soak runs alone below: its RSS and rates are the daemon's own
if [ "$preset" = cpu ]; then
  # The 10-minute soak (tests/soak/soak.py); the 1-hour run is by hand:
  # EDGETAP_SOAK_MINUTES=60 ctest --preset cpu -L soak
  ctest --preset "$preset" -L soak --output-on-failure
fi
EDGETAP_PACKAGE_TEST=1 ctest --preset "$preset" -L package   # packaging/test-package.sh: builds and tests the .deb
if [ "$preset" = cpu ]; then
  scripts/fuzz.sh
fi
