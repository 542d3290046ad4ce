#!/usr/bin/env bash
# Overhead of the runtime hooks in a Python process (PyTorch from .venv/):
# bench/python_train_step.py plain and under `dtype-lint run`, interleaved in
# one run, median seconds per step and their ratio; then `import torch` alone,
# plain and hooked (the adapter already built), median wall time and the
# difference.
set -euo pipefail
build=${1:-build}
python=${PYTHON:-.venv/bin/python}
rounds=${ROUNDS:-5}
steps=${STEPS:-50}
here=$(dirname "$0")
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
since() { awk -v start="$1" -v end="$(now)" 'BEGIN {print end - start}'; }

plain=() hooked=()
for _ in $(seq "$rounds"); do
  plain+=("$("$python" "$here/python_train_step.py" "$steps")")
  hooked+=("$("$build/analyzer/dtype-lint" run -- "$python" "$here/python_train_step.py" "$steps")")
done
p=$(median "${plain[@]}")
h=$(median "${hooked[@]}")
awk -v p="$p" -v h="$h" 'BEGIN {printf "train step: plain %.2f ms, hooked %.2f ms, ratio %.3f\n", p*1000, h*1000, h/p}'

plain=() hooked=()
for _ in $(seq "$rounds"); do
  t=$(now); "$python" -c 'import torch'; plain+=("$(since "$t")")
  t=$(now); "$build/analyzer/dtype-lint" run -- "$python" -c 'import torch'; hooked+=("$(since "$t")")
done
p=$(median "${plain[@]}")
h=$(median "${hooked[@]}")
awk -v p="$p" -v h="$h" 'BEGIN {printf "import torch: plain %.2f s, hooked %.2f s, +%.2f s\n", p, h, h-p}'
