#!/usr/bin/env bash
# Runs the libFuzzer targets of a sanitizer build (scripts/setup.sh builds
# build-asan/) for SECONDS each, one after the other, and prints a Markdown
# row per target: executions, executions per second, edge coverage, corpus
# size, and the crash files if any (under <build>/fuzz-artifacts/).
#   scripts/fuzz.sh [SECONDS] [TARGET...]       (default: 600 s, every target)
# Environment: BUILD (default build-asan), JOBS (parallel fuzzers per target, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
build="${BUILD:-build-asan}"
jobs="${JOBS:-1}"
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  for exe in "$build"/fuzz/fuzz_*; do targets+=("${exe##*/fuzz_}"); done
fi
if [ ! -x "$build/fuzz/fuzz_${targets[0]}" ]; then
  echo "fuzz.sh: no fuzz targets in $build/fuzz (build it: scripts/setup.sh)" >&2
  exit 2
fi
# As the tests run them: the sanitizer's runtime first, leaks not checked.
runtime="$(clang++-16 -print-file-name=libclang_rt.asan-x86_64.so)"
export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:intercept_tls_get_addr=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
echo "| target | seconds | executions | exec/s | coverage (edges) | corpus | crashes |"
echo "|---|---|---|---|---|---|---|"
status=0
for target in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$target"
  artifacts="$build/fuzz-artifacts"
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "fuzz/corpus/$target")
  [ -d "fuzz/regressions/$target" ] && inputs+=("fuzz/regressions/$target")
  log="$build/fuzz-$target.log"
  before=$(ls "$artifacts" | grep -cE "^$target-(crash|timeout|oom|leak)-" || true)
  parallel=()  # -jobs runs the fuzzer in child processes that log to ./fuzz-N.log: only when asked
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  LD_PRELOAD="$runtime" "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -print_final_stats=1 "${parallel[@]}" -artifact_prefix="$artifacts/$target-" "${inputs[@]}" \
    >"$log" 2>&1 || status=1
  after=$(ls "$artifacts" | grep -cE "^$target-(crash|timeout|oom|leak)-" || true)
  executions=$(grep -h "stat::number_of_executed_units" "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -h "stat::average_exec_per_sec" "$log" | awk '{s += $2} END {print s + 0}')
  coverage=$( (grep -ho "cov: [0-9]*" "$log" || true) | awk '{print $2}' | sort -n | tail -1)
  echo "| $target | $seconds | $executions | $rate | ${coverage:-?} | $(ls "$corpus" | wc -l) | $((after - before)) |"
done
exit $status
