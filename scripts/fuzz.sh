#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, the fuzz preset: clang, ASan + UBSan) and
# runs each on its committed seed corpus and dictionary. Fails on the first crash,
# sanitizer report, leak or timeout; the input that caused it is kept in
# build/fuzz/artifacts/ (replay: build/fuzz/fuzz/fuzz_<target> FILE).
#   scripts/fuzz.sh               CI: FUZZ_RUNS inputs per target (default 20000)
#   scripts/fuzz.sh --long SECS   the longer run: SECS seconds per target, the corpus
#                                 kept and grown in build/fuzz/corpus/<target>
# Either prints libFuzzer's final statistics (executions, coverage, features).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(config hello control safetensors)
runs=${FUZZ_RUNS:-20000}
long_s=""
[ "${1:-}" = "--long" ] && long_s=${2:?"--long needs a number of seconds per target"}

cmake --preset fuzz
cmake --build --preset fuzz -j2

artifacts=build/fuzz/artifacts
mkdir -p "$artifacts"
# GLib and GStreamer keep their type system and registry until exit (the control
# target starts a runtime): the suite's suppressions, third-party libraries only.
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

for t in "${targets[@]}"; do
  if [ -n "$long_s" ]; then
    corpus=build/fuzz/corpus/$t
    mkdir -p "$corpus"
    limit=(-max_total_time="$long_s")
  else
    corpus=$(mktemp -d)
    limit=(-runs="$runs")
  fi
  if [ -n "$long_s" ]; then echo "fuzz: $t ($long_s s)"; else echo "fuzz: $t ($runs inputs)"; fi
  # New inputs go to the first folder: the committed seeds (second) stay as they are.
  # Each target's log is printed only when it fails; its statistics always.
  log=$(mktemp)
  if ! build/fuzz/fuzz/fuzz_"$t" "${limit[@]}" -timeout=10 -print_final_stats=1 \
      -dict=fuzz/"$t".dict -artifact_prefix="$artifacts/$t-" "$corpus" fuzz/corpus/"$t" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $t FAILED (input kept under $artifacts/)"
    exit 1
  fi
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)" "$log" | sed "s/^/  $t: /"
  rm -f "$log"
  [ -n "$long_s" ] || rm -rf "$corpus"
done
echo "fuzz: ${#targets[@]} targets, no crash"
