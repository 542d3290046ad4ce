#!/usr/bin/env bash
# Overhead of the runtime hooks on a CPU training step: the same binary plain,
# under `dtype-lint run` with the numeric-health checks (DL301-DL303) turned
# down to nothing, and under `dtype-lint run` at their default cadence (all
# rules on), interleaved in one run; prints the median seconds per step of
# each and the ratios. The step is built in the build that has the optimized
# builds (scripts/setup.sh: build-torch2/, LibTorch 2.x); the tool is the main
# build's.
set -euo pipefail
build=${1:-build-torch2}
tool=${DTYPE_LINT:-build/analyzer/dtype-lint}
rounds=${ROUNDS:-5}
steps=${STEPS:-200}
step="$build/bench/bench_train_step"
cmake --build "$build" --target bench_train_step >/dev/null
plain=() without=() hooked=()
for _ in $(seq "$rounds"); do
  plain+=("$("$step" "$steps")")
  without+=("$(DTYPE_LINT_GRADIENT_CHECK_EVERY=1000000 DTYPE_LINT_CAST_CHECK_EVERY=1000000 "$tool" run -- "$step" "$steps")")
  hooked+=("$("$tool" run -- "$step" "$steps")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${plain[@]}")
w=$(median "${without[@]}")
h=$(median "${hooked[@]}")
awk -v p="$p" -v w="$w" -v h="$h" 'BEGIN {
  printf "plain %.3f ms/step, hooks without DL301-DL303 %.3f ms/step, hooks %.3f ms/step\n", p*1000, w*1000, h*1000
  printf "ratio hooks/plain %.3f, DL301-DL303 on/off %.3f\n", h/p, h/w }'
