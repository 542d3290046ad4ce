# `cmake --install <build> --prefix P` and `cpack -G DEB` (in the build
# directory), for the main build. The installed tool and preload find
# everything relative to themselves, never in the source or build tree:
#   P/bin/dtype-lint
#   P/lib/libdtype_lint_preload.so        `dtype-lint run` takes it from ../lib/
#   P/lib/adapters/<torch>/               the LibTorch adapter and its torch.id
#   P/share/dtype-lint/                   what the preload reads at run time (../share/dtype-lint/
#                                         from its lib/), laid out as in the source tree
#   P/include/dtype_lint/annotate.h       with find_package(dtype_lint): dtype_lint::annotate
#   P/lib/cmake/dtype_lint/
#   P/share/doc/dtype-lint/               README.md, docs/
# bin/, lib/ and share/dtype-lint/ are fixed (not GNUInstallDirs' lib/<multiarch>/):
# those lookups are relative.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME tool)
install(TARGETS dtype-lint RUNTIME DESTINATION bin)
install(TARGETS dtype_lint_preload LIBRARY DESTINATION lib)

# What the preload needs at run time: build_adapter.sh and the sources and
# headers it compiles (an adapter for a LibTorch none was built for; the install
# test builds one from them), and the Python hooks.
set(data_dir share/dtype-lint)
install(PROGRAMS runtime_hooks/adapter/build_adapter.sh DESTINATION ${data_dir}/runtime_hooks/adapter)
install(FILES runtime_hooks/adapter/adapter.cpp runtime_hooks/adapter/cuda_scan.cpp runtime_hooks/adapter/cuda_scan.h
        DESTINATION ${data_dir}/runtime_hooks/adapter)
install(FILES kernels/include/dtype_lint_kernels/tensor_stats.h kernels/include/dtype_lint_kernels/tensor_stats_launch.h
        DESTINATION ${data_dir}/kernels/include/dtype_lint_kernels)
if(DTYPE_LINT_SCAN_IMAGE)
  install(FILES ${DTYPE_LINT_SCAN_IMAGE} DESTINATION lib)  # beside the preload, which hands it to the adapter
endif()
install(FILES ${DTYPE_LINT_OP_CONTRACT_SOURCES} DESTINATION ${data_dir}/rules/src)
install(FILES runtime_hooks/include/dtype_lint_runtime/boundary.h runtime_hooks/include/dtype_lint_runtime/hook_scope.h
              runtime_hooks/include/dtype_lint_runtime/tensor_view.h
        DESTINATION ${data_dir}/runtime_hooks/include/dtype_lint_runtime)
install(FILES rules/include/dtype_lint/op_contracts.h rules/include/dtype_lint/dtype.h
        DESTINATION ${data_dir}/rules/include/dtype_lint)
install(DIRECTORY runtime_hooks/python DESTINATION ${data_dir}/runtime_hooks FILES_MATCHING PATTERN "*.py")

set(doc_dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/dtype-lint)
install(FILES README.md DESTINATION ${doc_dir})
install(DIRECTORY docs DESTINATION ${doc_dir})

# The scaler annotations user code includes: header-only, C++17.
add_library(dtype_lint_annotate INTERFACE)
target_include_directories(dtype_lint_annotate INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(dtype_lint_annotate INTERFACE cxx_std_17)
set_target_properties(dtype_lint_annotate PROPERTIES EXPORT_NAME annotate)
install(TARGETS dtype_lint_annotate EXPORT dtype_lintTargets)
install(DIRECTORY include/dtype_lint DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(config_dir lib/cmake/dtype_lint)
install(EXPORT dtype_lintTargets NAMESPACE dtype_lint:: DESTINATION ${config_dir})
configure_package_config_file(cmake/dtype_lintConfig.cmake.in ${CMAKE_BINARY_DIR}/dtype_lintConfig.cmake
                              INSTALL_DESTINATION ${config_dir})
# Before 1.0 a minor version may change the annotations.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/dtype_lintConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_BINARY_DIR}/dtype_lintConfig.cmake ${CMAKE_BINARY_DIR}/dtype_lintConfigVersion.cmake
        DESTINATION ${config_dir})

# The adapter for the LibTorch this build is against, registered under
# lib/adapters/ as in the build tree (not a satellite's, which lives there too).
get_filename_component(adapter_dir "${DTYPE_LINT_ADAPTER_DIR}" NAME)
install(TARGETS dtype_lint_adapter LIBRARY DESTINATION lib/adapters/${adapter_dir} COMPONENT libtorch_adapter)
install(FILES ${DTYPE_LINT_ADAPTER_DIR}/torch.id DESTINATION lib/adapters/${adapter_dir} COMPONENT libtorch_adapter)

# Two Debian packages, Depends computed by dpkg-shlibdeps (dpkg-dev). The
# adapter is a package of its own: it links Debian's LibTorch, but it is only
# ever dlopen'ed into a process that already has that LibTorch, so the tool's
# package must not depend on LibTorch (hundreds of MB) through it; without it,
# the preload builds an adapter on first use.
string(REGEX MATCH "^[0-9]+\\.[0-9]+" torch_series "${DTYPE_LINT_TORCH_VERSION}")
set(adapter_package dtype-lint-libtorch${torch_series}-adapter)
set(CPACK_PACKAGE_NAME dtype-lint)
set(CPACK_PACKAGE_CONTACT "dtype-lint maintainers <dtype-lint@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Finds mixed-precision training bugs in LibTorch and PyTorch code")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME dtype-lint)
# Beyond the shared libraries: clang's builtin headers (the analyzer's
# -resource-dir); a C++ compiler for the standard headers user code includes and
# the adapters built on first use; LibTorch's headers for the fallback flags.
set(CPACK_DEBIAN_TOOL_PACKAGE_DEPENDS "libclang-common-${LLVM_VERSION_MAJOR}-dev")
set(CPACK_DEBIAN_TOOL_PACKAGE_RECOMMENDS "g++")
set(CPACK_DEBIAN_TOOL_PACKAGE_SUGGESTS "libtorch-dev, ${adapter_package}")
set(CPACK_DEBIAN_LIBTORCH_ADAPTER_PACKAGE_NAME ${adapter_package})
set(CPACK_DEBIAN_LIBTORCH_ADAPTER_DESCRIPTION "dtype-lint's runtime adapter for Debian's LibTorch ${torch_series}")
set(CPACK_COMPONENT_LIBTORCH_ADAPTER_DEPENDS tool)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
include(CPack)
