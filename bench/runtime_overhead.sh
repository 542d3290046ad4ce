#!/usr/bin/env bash
# Overhead of the runtime hooks on a CPU training step: the same binary, plain
# and under `dtype-lint run` (all rules on), interleaved in one run; prints
# the median seconds per step of each and their ratio. The step is built in
# the build that has the optimized builds (scripts/setup.sh: build-torch2/,
# LibTorch 2.x); the tool is the main build's.
set -euo pipefail
build=${1:-build-torch2}
tool=${DTYPE_LINT:-build/analyzer/dtype-lint}
rounds=${ROUNDS:-5}
steps=${STEPS:-200}
plain=() hooked=()
for _ in $(seq "$rounds"); do
  plain+=("$("$build/bench/bench_train_step" "$steps")")
  hooked+=("$("$tool" run -- "$build/bench/bench_train_step" "$steps")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${plain[@]}")
h=$(median "${hooked[@]}")
awk -v p="$p" -v h="$h" 'BEGIN {printf "plain %.3f ms/step, hooked %.3f ms/step, ratio %.3f\n", p*1000, h*1000, h/p}'
