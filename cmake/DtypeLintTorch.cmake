# The LibTorch the project's LibTorch targets (samples, runtime adapter,
# runtime programs, analyzer cases) build against, as the target
# dtype_lint::torch:
# - by default Debian's LibTorch 1.13 (find_package(Torch)), at C++17: its
#   headers do not compile at C++20;
# - with -DDTYPE_LINT_TORCH_WHEEL=<virtual environment>, the LibTorch inside
#   that environment's `torch` wheel, at C++20 (its headers require it).
#   Only torch_cpu and c10 are linked: the wheel's own CMake config pulls in
#   torch_cuda and insists on a CUDA toolkit of the wheel's version.
# Sets DTYPE_LINT_TORCH_CXX_STANDARD, DTYPE_LINT_TORCH_VERSION and
# DTYPE_LINT_TORCH_CPU_LIBRARY (the libtorch_cpu the adapter binds to).
set(DTYPE_LINT_TORCH_WHEEL "" CACHE PATH "A virtual environment whose torch wheel's LibTorch to build against")

add_library(dtype_lint_torch INTERFACE)
add_library(dtype_lint::torch ALIAS dtype_lint_torch)
if(DTYPE_LINT_TORCH_WHEEL)
  file(GLOB torch_dirs "${DTYPE_LINT_TORCH_WHEEL}/lib/python3*/site-packages/torch")
  list(LENGTH torch_dirs torch_dir_count)
  if(NOT torch_dir_count EQUAL 1 OR NOT EXISTS "${torch_dirs}/lib/libtorch_cpu.so")
    message(FATAL_ERROR "DTYPE_LINT_TORCH_WHEEL=${DTYPE_LINT_TORCH_WHEEL}: no torch wheel with a LibTorch in it "
                        "(scripts/setup.sh installs one)")
  endif()
  file(STRINGS "${torch_dirs}/version.py" version_line REGEX "^__version__")
  string(REGEX REPLACE "^__version__ = '([^'+]*).*" "\\1" DTYPE_LINT_TORCH_VERSION "${version_line}")
  set(DTYPE_LINT_TORCH_CXX_STANDARD 20)
  set(DTYPE_LINT_TORCH_CPU_LIBRARY "${torch_dirs}/lib/libtorch_cpu.so")
  # A CUDA build (every Linux wheel) whose streams give their native handle:
  # the adapter's CUDA path launches the prebuilt scan on the op's stream.
  if(EXISTS "${torch_dirs}/lib/libc10_cuda.so")
    file(STRINGS "${torch_dirs}/include/c10/core/Stream.h" native_handle REGEX "native_handle\\(\\) const")
    if(native_handle)
      set(DTYPE_LINT_TORCH_CUDA ON)
    endif()
  endif()
  set(DTYPE_LINT_TORCH_INCLUDE_DIRS_LIST "${torch_dirs}/include" "${torch_dirs}/include/torch/csrc/api/include")
  target_include_directories(dtype_lint_torch SYSTEM INTERFACE ${DTYPE_LINT_TORCH_INCLUDE_DIRS_LIST})
  target_link_libraries(dtype_lint_torch INTERFACE "${DTYPE_LINT_TORCH_CPU_LIBRARY}" "${torch_dirs}/lib/libc10.so")
  # The wheel is built with the new libstdc++ ABI (torch._C._GLIBCXX_USE_CXX11_ABI).
  target_compile_definitions(dtype_lint_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
  # Its libraries find the CUDA runtime wheels through their RUNPATH; the
  # programs linked here find libtorch_cpu through theirs.
  target_link_options(dtype_lint_torch INTERFACE "-Wl,-rpath,${torch_dirs}/lib")
else()
  find_package(Torch REQUIRED)
  set(DTYPE_LINT_TORCH_VERSION "${Torch_VERSION}")
  set(DTYPE_LINT_TORCH_CXX_STANDARD 17)
  find_library(DTYPE_LINT_TORCH_CPU_LIBRARY torch_cpu HINTS ${TORCH_INSTALL_PREFIX}/lib REQUIRED)
  set(DTYPE_LINT_TORCH_INCLUDE_DIRS_LIST ${TORCH_INCLUDE_DIRS})
  target_link_libraries(dtype_lint_torch INTERFACE ${TORCH_LIBRARIES})
endif()
get_filename_component(DTYPE_LINT_TORCH_CPU_LIBRARY "${DTYPE_LINT_TORCH_CPU_LIBRARY}" REALPATH)
message(STATUS "dtype-lint: LibTorch ${DTYPE_LINT_TORCH_VERSION} (${DTYPE_LINT_TORCH_CPU_LIBRARY}), "
               "C++${DTYPE_LINT_TORCH_CXX_STANDARD}")

# Build flavors of LibTorch targets:
#   debug           -O0 -g1 (what the runtime tests point at by line: line tables
#                           and functions; full -g doubles a TU's compile time
#                           and nothing reads the rest)
#   relwithdebinfo  -O2 -g  (CMake's RelWithDebInfo, how training programs are built)
#   release         -O2     (no debug info: findings point at functions)
set(DTYPE_LINT_TORCH_FLAVOR_OPTIONS_debug -O0 -g1)
set(DTYPE_LINT_TORCH_FLAVOR_OPTIONS_relwithdebinfo -O2 -g)
set(DTYPE_LINT_TORCH_FLAVOR_OPTIONS_release -O2 -g0)

# One precompiled <torch/torch.h> for the debug flavor, shared by every debug
# LibTorch target: a TU then compiles in about a third of the time. The few
# optimized TUs compile without one: at -O2 the optimizer, not the headers,
# takes most of a TU's time, and their own header would cost more than it saves.
add_library(dtype_lint_torch_pch_debug OBJECT ${CMAKE_CURRENT_LIST_DIR}/torch_pch_anchor.cpp)
target_precompile_headers(dtype_lint_torch_pch_debug PRIVATE <torch/torch.h>)
target_link_libraries(dtype_lint_torch_pch_debug PRIVATE dtype_lint::torch)
target_include_directories(dtype_lint_torch_pch_debug PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_compile_options(dtype_lint_torch_pch_debug PRIVATE ${DTYPE_LINT_TORCH_FLAVOR_OPTIONS_debug} -w)
set_target_properties(dtype_lint_torch_pch_debug PROPERTIES CXX_STANDARD ${DTYPE_LINT_TORCH_CXX_STANDARD}
                      EXCLUDE_FROM_ALL ON)

# A target compiled against LibTorch in one flavor (debug ones with the shared
# precompiled header: same options as its anchor, or gcc would not use it).
function(dtype_lint_torch_target target flavor)
  target_link_libraries(${target} PRIVATE dtype_lint::torch)
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(${target} PRIVATE ${DTYPE_LINT_TORCH_FLAVOR_OPTIONS_${flavor}} -w)
  if(flavor STREQUAL "debug")
    target_precompile_headers(${target} REUSE_FROM dtype_lint_torch_pch_debug)
  endif()
  set_target_properties(${target} PROPERTIES CXX_STANDARD ${DTYPE_LINT_TORCH_CXX_STANDARD})
endfunction()
