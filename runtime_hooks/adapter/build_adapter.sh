#!/bin/sh
# Builds the runtime adapter against the LibTorch whose libtorch_cpu.so is $1,
# into $2 (with torch.id naming that library), with the compiler at hand ($CXX,
# else c++). The preload library runs it for a LibTorch it has no adapter for.
# `build_adapter.sh --abi LIBTORCH_CPU` prints the C++ ABI that library was built with.
set -eu

# The C++ ABI LibTorch was built with: the std::string in its own functions'
# symbols says (not any __cxx11 symbol: a wheel built with the old ABI also
# exports libstdc++'s, linked in statically).
cxx_abi_of() {
  if nm -D --defined-only "$1" 2>/dev/null | grep -E ' T _ZN(2at|3c10|5torch)' | grep -q '__cxx11'; then
    echo 1
  else
    echo 0
  fi
}
if [ "$1" = "--abi" ]; then cxx_abi_of "$2"; exit 0; fi

libtorch=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
libdir=$(dirname "$libtorch")
# A wheel's torch/lib/ has torch/include/ beside it; a system LibTorch's headers are in /usr/include.
include=$(cd "$libdir/.." && pwd)/include
[ -d "$include/ATen" ] || include=/usr/include
# 2.x states its version in torch/headeronly/version.h, older ones in the C++ API's.
major=$(sed -n 's/^#define TORCH_VERSION_MAJOR \([0-9]*\).*/\1/p' "$include/torch/headeronly/version.h" \
        "$include/torch/csrc/api/include/torch/version.h" 2>/dev/null | head -n1)
[ -n "$major" ] || { echo "dtype-lint: no LibTorch headers for $libtorch (looked in $include)" >&2; exit 1; }
std=c++17
[ "$major" -ge 2 ] && std=c++20
abi=$(cxx_abi_of "$libtorch")
# /usr/include is searched anyway: naming it with -isystem breaks libstdc++'s #include_next.
set -- -isystem "$include/torch/csrc/api/include"
[ "$include" = /usr/include ] || set -- -isystem "$include" "$@"
# A CUDA build of LibTorch whose streams give their native handle: the CUDA
# path, which launches the prebuilt scan through the driver API (cuda_scan.h;
# no CUDA compiler or header needed here).
cuda=
if [ -e "$libdir/libc10_cuda.so" ] && grep -q 'native_handle() const' "$include/c10/core/Stream.h" 2>/dev/null; then
  cuda="-DDTYPE_LINT_ADAPTER_CUDA -I$root/kernels/include $root/runtime_hooks/adapter/cuda_scan.cpp"
fi
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || { echo "dtype-lint: no C++ compiler ('$cxx') to build the runtime adapter" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "$(dirname "$out")/.building.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$(dirname "$out")/build-$(basename "$out").log
if ! "$cxx" -std=$std -O2 -DNDEBUG -fPIC -shared -fvisibility=hidden -w -D_GLIBCXX_USE_CXX11_ABI=$abi \
  -I"$root/runtime_hooks/include" -I"$root/rules/include" "$@" \
  "$root/runtime_hooks/adapter/adapter.cpp" "$root/rules/src/op_contracts.cpp" $cuda \
  -o "$tmp/libdtype_lint_adapter.so" "$libtorch" -L"$libdir" -lc10 -Wl,-rpath,"$libdir" >"$log" 2>&1; then
  echo "dtype-lint: $cxx failed ($(grep -m1 'error' "$log")); the whole output is in $log" >&2
  exit 1
fi
# Which LibTorch it is for: its path, then its size and modification time.
printf '%s\n%s\n' "$libtorch" "$(stat -L -c '%s %Y' "$libtorch")" > "$tmp/torch.id"
# Processes started together (torchrun) may build at once: the first rename wins.
mv -T "$tmp" "$out" 2>/dev/null || true
