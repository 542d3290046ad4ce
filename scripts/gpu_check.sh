#!/usr/bin/env bash
# The runtime hooks on a real GPU, in one command (docs/PERFORMANCE.md, issue
# "make the runtime hooks real on GPUs"): for a machine with an NVIDIA GPU, a
# pip torch with CUDA and nvcc, nothing fetched. Uses the preload library and
# the prebuilt scan made by scripts/setup.sh (build/lib/, or $DTYPE_LINT_LIB:
# carry it to such a machine; the scan is prebuilt here with nvcc when it was
# not carried), laid out as installed, so that the adapter is built on first
# use against this machine's torch, as a pip user's is. Then:
#   1. the CUDA kernel tests and the scan bench, when carried (build/tests,
#      build/bench: kernels_cuda_tests, bench_tensor_stats);
#   2. the Python samples on the GPU (samples/python, "cpu" made "cuda")
#      under the hooks, their markers checked;
#   3. the overhead of a real step (bench/gpu_train_step.py: plain and
#      hooked, 3 runs each, medians) and the per-op cost (bench/op_cost.py);
# and prints every figure. On a machine without a GPU, each part says
# "no GPU: skipped" and the script ends with status 0.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3}
lib=${DTYPE_LINT_LIB:-$root/build/lib}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
say() { printf '== %s\n' "$*"; }

if ! "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  for part in "adapter with its CUDA path" "CUDA kernel tests" "scan bench" "Python samples on the GPU" \
              "overhead of a real step" "per-op cost"; do
    say "$part: no GPU: skipped"
  done
  exit 0
fi
"$python" -c 'import torch; print("torch", torch.__version__, "on", torch.cuda.get_device_name(0))'
[ -f "$lib/libdtype_lint_preload.so" ] || { echo "gpu_check: no $lib/libdtype_lint_preload.so (run scripts/setup.sh, or set DTYPE_LINT_LIB)" >&2; exit 2; }

# The preload laid out as installed: lib/ (with the libraries it needs that
# this machine may lack, when carried beside it) and share/dtype-lint/ with
# what build_adapter.sh compiles and the Python hooks.
install=$work/install
mkdir -p "$install/lib" "$install/share/dtype-lint"
cp "$lib"/*.so* "$install/lib/" 2>/dev/null
ln -s "$root/runtime_hooks" "$root/rules" "$root/kernels" "$install/share/dtype-lint/"
say "adapter with its CUDA path"
if [ -f "$lib/dtype_lint_tensor_stats.fatbin" ]; then
  cp "$lib/dtype_lint_tensor_stats.fatbin" "$install/lib/"
else
  gencode=
  for arch in 75 80 86 89 90 100 120; do gencode="$gencode -gencode arch=compute_$arch,code=sm_$arch"; done
  nvcc --fatbin -std=c++17 -O3 $gencode -gencode arch=compute_120,code=compute_120 -I"$root/kernels/include" \
    -o "$install/lib/dtype_lint_tensor_stats.fatbin" "$root/kernels/cuda/tensor_stats.cu" || status=1
fi
ls -la "$install/lib/"

# Runs a command under the hooks (what `dtype-lint run` sets), its findings into $1.
hooked() {
  local report=$1; shift
  LD_LIBRARY_PATH="$install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$install/lib/libdtype_lint_preload.so" \
    DTYPE_LINT_CACHE_DIR="$work/cache" DTYPE_LINT_REPORT="$report" "$@"
}
# The adapter is built on first use (once), here, with its CUDA path.
hooked "$work/first.jsonl" "$python" -c 'import torch; torch.ones(4, device="cuda").half().sum().item()'
if find "$work/cache" -name 'libdtype_lint_adapter.so' -exec grep -q cuModuleLoadData {} \; -print | grep -q .; then
  echo "the adapter built on first use has its CUDA path"
else
  echo "the adapter built on first use has NO CUDA path"; status=1
fi

say "CUDA kernel tests"
if [ -x build/tests/kernels_cuda_tests ]; then build/tests/kernels_cuda_tests || status=1
else echo "not carried (build/tests/kernels_cuda_tests): skipped"; fi
say "scan bench (bytes/s of the scan against the device copy)"
if [ -x build/bench/bench_tensor_stats ]; then build/bench/bench_tensor_stats --benchmark_filter=Cuda || status=1
else echo "not carried (build/bench/bench_tensor_stats): skipped"; fi

say "Python samples on the GPU"
for script in samples/python/*/*.py; do
  gpu=$work/$(basename "$(dirname "$script")")_$(basename "$script")
  sed -e 's/"cpu"/"cuda"/g' "$script" > "$gpu"
  report=$work/report.jsonl
  rm -f "$report"
  (cd "$work" && hooked "$report" "$python" -c "import runpy, sys, torch; torch.set_default_device('cuda'); \
sys.argv = ['$gpu']; runpy.run_path('$gpu', run_name='__main__')") >/dev/null 2>"$work/stderr"
  if ! "$python" - "$gpu" "$report" <<'PY'
import json, re, sys
script, report = sys.argv[1], sys.argv[2]
expected = set()
for number, line in enumerate(open(script), 1):
    for rule in re.findall(r"dtype-lint-expect: ((?:DL\d{3}[, ]*)+)", line):
        expected |= {(number, r) for r in re.findall(r"DL\d{3}", rule)}
found = set()
try:
    for line in open(report):
        f = json.loads(line)
        if "rule" in f and f["location"]["file"].endswith(script.split("/")[-1]):
            found.add((f["location"]["line"], f["rule"]))
except FileNotFoundError:
    pass
ok = found == expected
print(f"{'ok  ' if ok else 'FAIL'} {script.split('/')[-1]}: expected {sorted(expected)}, found {sorted(found)}")
sys.exit(0 if ok else 1)
PY
  then status=1; tail -3 "$work/stderr"; fi
done

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
say "overhead of a real step (TransformerEncoder, fp16 autocast + GradScaler, 150 steps)"
plain=() with=()
for _ in 1 2 3; do
  plain+=("$("$python" bench/gpu_train_step.py 150)")
  with+=("$(hooked "$work/step.jsonl" "$python" bench/gpu_train_step.py 150)")
done
p=$(printf '%s\n' "${plain[@]}" | median)
h=$(printf '%s\n' "${with[@]}" | median)
awk -v p="$p" -v h="$h" 'BEGIN {printf "plain %.2f ms/step, hooked %.2f ms/step, ratio %.3f\n", p*1000, h*1000, h/p}'

say "per-op cost from Python (tiny CPU ops; ns per op)"
"$python" bench/op_cost.py 20000 > "$work/ops.plain"
hooked "$work/ops.jsonl" "$python" bench/op_cost.py 20000 > "$work/ops.hooked"
join "$work/ops.plain" "$work/ops.hooked" | awk '{printf "%-8s plain %8.1f hooked %8.1f added %8.1f\n", $1, $2, $3, $3 - $2}'
exit $status
