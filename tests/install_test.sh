#!/usr/bin/env bash
# The installed tree, not the build tree: `cmake --install BUILD --prefix P`,
# then P/bin/dtype-lint analyzes and runs a sample with the preload, adapter,
# adapter sources and Python hooks of P, and find_package(dtype_lint) finds
# dtype_lint::annotate.
# Usage: tests/install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(cd "$(mktemp -d)" && pwd -P)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "install_test: $*" >&2
  [ ! -s "$work/out" ] || sed 's/^/  | /' "$work/out" >&2
  exit 1
}
# Runs the command with stdout and stderr in $work/out; its exit status in $rc.
capture() {
  rc=0
  "$@" >"$work/out" 2>&1 || rc=$?
}
# The lines of buggy.cpp with a DL101 error in $work/out, space-separated.
dl101_lines() {
  sed -n 's|^.*/buggy\.cpp:\([0-9]*\):[0-9]*: error: .*\[DL101-.*|\1|p' "$work/out" | sort -nu | tr '\n' ' '
}

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
tool=$prefix/bin/dtype-lint
# Nothing points the tool at the build tree; its caches start empty.
unset DTYPE_LINT_PRELOAD DTYPE_LINT_ADAPTER LD_PRELOAD
export DTYPE_LINT_CACHE_DIR=$work/cache
[ -f "$prefix/share/dtype-lint/runtime_hooks/python/sitecustomize.py" ] || fail "the Python hooks are not installed"
compgen -G "$prefix/lib/adapters/*/torch.id" >/dev/null || fail "no adapter registered in $prefix/lib/adapters/"

capture "$tool" --version
[ "$rc" -eq 0 ] && grep -q '^dtype-lint ' "$work/out" || fail "--version: exit $rc"
capture "$tool" --list-rules
[ "$rc" -eq 0 ] && grep -q '^DL101 ' "$work/out" || fail "--list-rules: exit $rc"

sample=$source_dir/samples/DL101_mixed_dtype_matmul
expected=$(grep -n 'dtype-lint-expect: DL101' "$sample/buggy.cpp" | cut -d: -f1 | sort -nu | tr '\n' ' ')
capture "$tool" -p "$build" "$sample/buggy.cpp"
[ "$rc" -eq 1 ] || fail "static analysis of buggy.cpp: exit $rc, expected 1"
[ "$(dl101_lines)" = "$expected" ] || fail "static analysis of buggy.cpp: DL101 at lines '$(dl101_lines)', expected '$expected'"
capture "$tool" -p "$build" "$sample/fixed.cpp"
[ "$rc" -eq 0 ] || fail "static analysis of fixed.cpp: exit $rc, expected 0"

# `run` preloads the installed library (what a child of the program maps)...
capture "$tool" run -- cat /proc/self/maps
grep -q " $prefix/lib/libdtype_lint_preload.so$" "$work/out" || fail "run did not preload $prefix/lib/libdtype_lint_preload.so"
# ... which takes the Python hooks from the prefix...
capture "$tool" run -- python3 -c 'import sitecustomize; print(sitecustomize.__file__)'
grep -qx "$prefix/share/dtype-lint/runtime_hooks/python/sitecustomize.py" "$work/out" ||
  fail "the preload did not take the Python hooks from $prefix/share/dtype-lint/"
# ... and the adapter registered there,
program=$build/samples/sample_DL101_mixed_dtype_matmul_buggy
capture "$tool" run -- "$program"
[ "$(dl101_lines)" = "$expected" ] || fail "run: DL101 at lines '$(dl101_lines)', expected '$expected'"
! grep -q 'building the runtime adapter' "$work/out" || fail "run built an adapter: the registered one did not match"
# or, with none registered, builds one from the sources installed there.
rm -r "$prefix/lib/adapters"
capture "$tool" run -- "$program"
grep -q 'building the runtime adapter' "$work/out" || fail "run without a registered adapter did not build one"
[ "$(dl101_lines)" = "$expected" ] || fail "run with a built adapter: DL101 at lines '$(dl101_lines)', expected '$expected'"

# A project using the annotations through the installed CMake package.
mkdir "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(dtype_lint 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE dtype_lint::annotate)
EOF
cat >"$work/consumer/main.cpp" <<'EOF'
#include "dtype_lint/annotate.h"
int main() { dtype_lint::annotate::update(nullptr); }
EOF
capture cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
[ "$rc" -eq 0 ] || fail "find_package(dtype_lint) with CMAKE_PREFIX_PATH=$prefix failed"
capture cmake --build "$work/consumer/build"
[ "$rc" -eq 0 ] && "$work/consumer/build/consumer" || fail "a program including dtype_lint/annotate.h did not build or run"
echo "install_test: the installed tree works"
