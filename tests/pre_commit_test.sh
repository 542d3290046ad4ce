#!/usr/bin/env bash
# The pre-commit hook as a project uses it: a repository with a compilation
# database in build/, a staged buggy file fails the hook with its finding, the
# fixed one passes; a staged Python script likewise. Usage: pre_commit_test.sh SOURCE_DIR BUILD_DIR PRE_COMMIT
set -euo pipefail
source_dir=$1 build_dir=$2 pre_commit=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build_dir/analyzer:$PATH" PRE_COMMIT_HOME="$work/pre-commit-home"
export DTYPE_LINT_CACHE_DIR="$build_dir/test-cache"
sample="$source_dir/samples/DL101_mixed_dtype_matmul"
repo="$work/project"
mkdir -p "$repo/src" "$repo/build"
cd "$repo"
git init -q .
cp "$sample/buggy.cpp" src/train.cpp
# The project's database: the sample's own compile command, for src/train.cpp.
python3 - "$build_dir/compile_commands.json" "$sample/buggy.cpp" "$repo" > build/compile_commands.json <<'PY'
import json, sys
database, sample, repo = sys.argv[1:]
command = next(c for c in json.load(open(database)) if c["file"] == sample)
command = {k: v.replace(sample, repo + "/src/train.cpp") if isinstance(v, str) else v for k, v in command.items()}
print(json.dumps([command]))
PY
git add src/train.cpp build/compile_commands.json

expect() { grep -qF -- "$1" "$work/out" || { echo "FAIL: no '$1' in the hook's output:"; cat "$work/out"; exit 1; }; }
if "$pre_commit" try-repo "$source_dir" dtype-lint --files src/train.cpp > "$work/out" 2>&1; then
  echo "FAIL: the hook passed on a buggy file"; cat "$work/out"; exit 1
fi
expect "src/train.cpp:14:21: error: 'linear' on operands of different dtypes"
expect "src/train.cpp:21:10: error: 'matmul'"
if grep -q "fallback flags" "$work/out"; then echo "FAIL: the database was not used"; cat "$work/out"; exit 1; fi

cp "$sample/fixed.cpp" src/train.cpp
git add src/train.cpp
"$pre_commit" try-repo "$source_dir" dtype-lint --files src/train.cpp > "$work/out" 2>&1 || {
  echo "FAIL: the hook failed on the fixed file"; cat "$work/out"; exit 1; }
expect "dtype-lint"
expect "Passed"

# A Python training script: no database needed.
python_sample="$source_dir/samples/python/DL201_double_unscale"
cp "$python_sample/buggy.py" src/train.py
git add src/train.py
if "$pre_commit" try-repo "$source_dir" dtype-lint --files src/train.py > "$work/out" 2>&1; then
  echo "FAIL: the hook passed on a buggy Python file"; cat "$work/out"; exit 1
fi
expect "src/train.py:16:5: error: gradients of 'optimizer' unscaled again before 'scaler'.update()"
cp "$python_sample/fixed.py" src/train.py
git add src/train.py
"$pre_commit" try-repo "$source_dir" dtype-lint --files src/train.py > "$work/out" 2>&1 || {
  echo "FAIL: the hook failed on the fixed Python file"; cat "$work/out"; exit 1; }
echo "pre-commit hook: buggy files (C++ and Python) fail with their findings, fixed files pass"
