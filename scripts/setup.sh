#!/usr/bin/env bash
# Set-up on a fresh Debian 12 machine: the packages dtype-lint builds with,
# then configure and build (tests and samples included) into build/ (against
# Debian's LibTorch 1.13) and build-torch2/ (against the torch wheel's LibTorch:
# the samples, the runtime adapter and the runtime programs; the analyzer and
# the preload library are build/'s, whose ctest runs build-torch2/'s tests too).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++
  llvm-16-dev libclang-16-dev clang-16   # the analyzer (Clang LibTooling)
  clang-tidy-16                          # bench/analyzer_speed.py baseline
  clang-tools-16                         # clang-apply-replacements: the --export-fixes test
  libtorch-dev                           # LibTorch 1.13 (CPU): samples, runtime adapter
  libfmt-dev nlohmann-json3-dev libgtest-dev libdw-dev
  libhwy-dev libbenchmark-dev            # kernels/: SIMD tensor statistics, bench_tensor_stats
  python3-venv                           # .venv/: the torch wheel (scripts/torch-wheel-requirements.txt)
  dpkg-dev file debootstrap              # cpack -G DEB (dpkg-shlibdeps), scripts/check_deb.sh
)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# PyTorch 2.15 for the Python runtime tests: pinned, no dependency resolution,
# downloads cached by pip.
if [ ! -x .venv/bin/python ] || ! cmp -s scripts/torch-wheel-requirements.txt .venv/requirements.txt; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -r scripts/torch-wheel-requirements.txt
  cp scripts/torch-wheel-requirements.txt .venv/requirements.txt
fi
if ! cmp -s scripts/tool-requirements.txt .venv/tool-requirements.txt; then
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -r scripts/tool-requirements.txt
  cp scripts/tool-requirements.txt .venv/tool-requirements.txt
fi

# The optimized builds of the samples (and their three precompiled headers,
# ~2 GB) are built and tested against one LibTorch: build-torch2/'s.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTYPE_LINT_SATELLITE_BUILDS=build-torch2 \
  -DDTYPE_LINT_OPTIMIZED_BUILDS=OFF
cmake --build build -j "$(nproc)"
cmake -S . -B build-torch2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTYPE_LINT_TORCH_WHEEL="$PWD/.venv" \
  -DDTYPE_LINT_MAIN_BUILD=build
cmake --build build-torch2 -j "$(nproc)"
