#!/usr/bin/env bash
# Set-up on a fresh Debian 12 machine: the packages dtype-lint builds with,
# then configure and build (tests and samples included) into build/ (against
# Debian's LibTorch 1.13) and build-torch2/ (against the torch wheel's LibTorch:
# the samples, the runtime adapter and the runtime programs; the analyzer and
# the preload library are build/'s), then the sanitizer builds build-asan/ and
# build-tsan/. build/'s ctest runs the other three's tests too.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++
  llvm-16-dev libclang-16-dev clang-16   # the analyzer (Clang LibTooling)
  libclang-rt-16-dev                     # build-asan/: the sanitizers' runtimes and libFuzzer
  clang-tidy-16                          # bench/analyzer_speed.py baseline
  clang-tools-16                         # clang-apply-replacements: the --export-fixes test
  libtorch-dev                           # LibTorch 1.13 (CPU): samples, runtime adapter
  libfmt-dev nlohmann-json3-dev libgtest-dev libdw-dev
  libtomlplusplus-dev                    # the Python front end: TOML config files (header-only use)
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

# The optimized builds of some samples are built and tested against one
# LibTorch: build-torch2/'s.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTYPE_LINT_SATELLITE_BUILDS="build-torch2;build-asan;build-tsan" \
  -DDTYPE_LINT_OPTIMIZED_BUILDS=OFF
cmake --build build -j "$(nproc)"
cmake -S . -B build-torch2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDTYPE_LINT_TORCH_WHEEL="$PWD/.venv" \
  -DDTYPE_LINT_MAIN_BUILD=build
cmake --build build-torch2 -j "$(nproc)"

# Sanitizer builds of dtype-lint's own code, tested against build/'s samples
# and programs (docs/RELIABILITY.md): ASan+UBSan with clang, with the fuzz
# targets; TSan for the runtime hooks.
# -O0 and line tables: what the sanitizers need. -O1 took 45% longer to build
# (the analyzer's Clang-AST code) and saved less in the suites, whose time is
# LibTorch's processes and Clang's own (uninstrumented) parsing.
CC=clang-16 CXX=clang++-16 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None \
  "-DCMAKE_CXX_FLAGS=-O0 -gline-tables-only" "-DCMAKE_C_FLAGS=-O0 -gline-tables-only" \
  -DDTYPE_LINT_SANITIZE=address,undefined -DDTYPE_LINT_PROGRAMS_FROM=build
cmake --build build-asan -j "$(nproc)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" "-DCMAKE_C_FLAGS=-O1 -g1" \
  -DDTYPE_LINT_SANITIZE=thread -DDTYPE_LINT_PROGRAMS_FROM=build
cmake --build build-tsan -j "$(nproc)"
