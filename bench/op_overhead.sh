#!/usr/bin/env bash
# The hooks' added cost per dispatched op, in ns, from C++ (bench_op_cost,
# built against the optimized builds' LibTorch) and from Python (op_cost.py,
# the .venv torch): each program plain and under `dtype-lint run` (every rule
# on), interleaved in one run; the median of the rounds per kind of op, and
# hooked minus plain. Budget: <= 300 ns from C++, <= 1000 ns from Python.
set -euo pipefail
build=${1:-build-torch2}
tool=${DTYPE_LINT:-build/analyzer/dtype-lint}
python=${PYTHON:-.venv/bin/python}
rounds=${ROUNDS:-5}
ops=${OPS:-20000}
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {  # name, command...
  local name=$1; shift
  for r in $(seq "$rounds"); do
    "$@" "$ops" > "$work/$name.plain.$r"
    "$tool" run -- "$@" "$ops" > "$work/$name.hooked.$r"
  done
  for kind in $(cut -d' ' -f1 "$work/$name.plain.1"); do
    p=$(cat "$work/$name".plain.* | awk -v k="$kind" '$1 == k {print $2}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    h=$(cat "$work/$name".hooked.* | awk -v k="$kind" '$1 == k {print $2}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    awk -v n="$name" -v k="$kind" -v p="$p" -v h="$h" \
      'BEGIN {printf "%-7s %-8s plain %8.1f ns/op  hooked %8.1f ns/op  added %8.1f ns/op\n", n, k, p, h, h - p}'
  done
}

cmake --build "$build" --target bench_op_cost >/dev/null
measure cxx "$build/bench/bench_op_cost"
[ -x "$python" ] && measure python "$python" "$here/op_cost.py"
