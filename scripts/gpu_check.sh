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
say() { printf '== [%ss] %s\n' "$SECONDS" "$*"; }

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
  find "$work/cache" -name 'build-*.log' -exec tail -20 {} \;
fi

say "CUDA kernel tests"
if [ -x build/tests/kernels_cuda_tests ]; then build/tests/kernels_cuda_tests || status=1
else echo "not carried (build/tests/kernels_cuda_tests): skipped"; fi
say "scan bench (bytes/s of the scan against the device copy)"
if [ -x build/bench/bench_tensor_stats ]; then
  build/bench/bench_tensor_stats --benchmark_filter=CUDA --benchmark_out="$work/scan.json" --benchmark_out_format=json \
    >/dev/null || status=1
  # Each scan against the copy of the same bytes: time, and read rate against the copy's (it reads half the bytes it moves).
  "$python" - "$work/scan.json" <<'PY'
import json, sys
runs = {b["name"].split("/manual_time")[0]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
for name, scan in runs.items():
    if not name.startswith("BM_StatsCUDA") or scan.get("error_occurred"):
        continue
    size = int(name.split("/")[2])
    copy = runs[f"BM_MemcpyCUDA/{size}"]
    share = scan["bytes_per_second"] / (copy["bytes_per_second"] / 2)
    print(f"{name.split('/')[1]:9} {size / 2**20:9.3f} MiB  scan {scan['real_time'] / 1e3:8.1f} us  "
          f"copy {copy['real_time'] / 1e3:8.1f} us  scan/copy time {scan['real_time'] / copy['real_time']:5.2f}  "
          f"read rate {100 * share:5.1f}% of the copy's")
PY
else echo "not carried (build/bench/bench_tensor_stats): skipped"; fi

say "Python samples and runtime test scripts on the GPU (8 at a time)"
# One sample on the GPU under the hooks, its findings checked against its markers.
check_sample() {
  local script=$1 name
  name=$(basename "$(dirname "$script")")_$(basename "$script" .py)
  local gpu=$work/$name.py report=$work/$name.jsonl
  # On the GPU: devices named "cpu" made "cuda", and CUDA the default device
  # (set on the script's own `import torch` line, so that its lines keep their numbers).
  sed -e 's/"cpu"/"cuda"/g' -e '0,/^import torch$/s//import torch; torch.set_default_device("cuda")/' "$script" > "$gpu"
  local profile=
  [ "$name" = python_precision_regions ] && profile=1  # DL305 is reported when asked for
  (cd "$work" && DTYPE_LINT_PROFILE=$profile hooked "$report" "$python" "$gpu") >/dev/null 2>"$work/$name.stderr"
  "$python" - "$gpu" "$report" <<'PY' || { tail -3 "$work/$name.stderr"; return 1; }
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
}
running=0
# The samples, and the runtime tests' scripts about what a GPU changes: counts
# read at exit, backward on the device threads, cuBLAS outside the dispatcher.
gpu_scripts=(samples/python/*/*.py)
for name in half_cast_at_exit precision_regions custom_bwd_autocast matmul_self_dtype hand_written_clipping \
            loss_scaled_inside_scaler; do gpu_scripts+=("tests/runtime_programs/python/$name.py"); done
for script in "${gpu_scripts[@]}"; do
  check_sample "$script" > "$work/$(basename "$(dirname "$script")")_$(basename "$script" .py).result" 2>&1 &
  running=$((running + 1))
  if [ "$running" -ge 8 ]; then wait -n || status=1; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
cat "$work"/*.result

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
say "overhead of a real step (TransformerEncoder, fp16 autocast + GradScaler, 150 steps)"
# Beside plain and hooked: the hooks with the numeric checks turned down to
# nothing, and an empty RecordFunction callback without inputs (the hooks' global one)
# (bench/record_function_floor.cpp, built here against this torch): the
# floor of the hooks' mechanism.
floor=$work/librecord_function_floor.so
"$python" - "$root/bench/record_function_floor.cpp" "$floor" <<'PY' || floor=
import subprocess, sys, torch
from torch.utils import cpp_extension
includes = [f"-I{path}" for path in cpp_extension.include_paths()]
abi = f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
libs = cpp_extension.library_paths()[0]
subprocess.run(["c++", "-std=c++20", "-O2", "-w", "-shared", "-fPIC", abi, *includes, sys.argv[1], "-o", sys.argv[2],
                f"-L{libs}", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{libs}"], check=True)
PY
plain=() with=() unchecked=() floored=()
for _ in 1 2 3; do
  plain+=("$("$python" bench/gpu_train_step.py 150)")
  with+=("$(hooked "$work/step.jsonl" "$python" bench/gpu_train_step.py 150)")
  unchecked+=("$(DTYPE_LINT_GRADIENT_CHECK_EVERY=1000000 DTYPE_LINT_CAST_CHECK_EVERY=1000000 \
                 hooked "$work/step.jsonl" "$python" bench/gpu_train_step.py 150)")
  [ -n "$floor" ] && floored+=("$(DTYPE_LINT_BENCH_FLOOR=$floor "$python" bench/gpu_train_step.py 150)")
done
p=$(printf '%s\n' "${plain[@]}" | median)
for variant in with unchecked floored; do
  declare -n runs=$variant
  [ "${#runs[@]}" -gt 0 ] || continue
  m=$(printf '%s\n' "${runs[@]}" | median)
  case $variant in
    with) label="hooked" ;;
    unchecked) label="hooked, numeric checks off" ;;
    floored) label="empty callback, no inputs" ;;
  esac
  awk -v p="$p" -v m="$m" -v label="$label" \
    'BEGIN {printf "plain %.2f ms/step, %s %.2f ms/step, ratio %.3f\n", p*1000, label, m*1000, m/p}'
done

say "per-op cost from Python (tiny CPU ops; ns per op)"
"$python" bench/op_cost.py 20000 > "$work/ops.plain"
hooked "$work/ops.jsonl" "$python" bench/op_cost.py 20000 > "$work/ops.hooked"
join "$work/ops.plain" "$work/ops.hooked" | awk '{printf "%-8s plain %8.1f hooked %8.1f added %8.1f\n", $1, $2, $3, $3 - $2}'
exit $status
