#include "user_frame.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

namespace dtype_lint::runtime {
namespace {

// Shared objects whose frames are never the user's code.
bool isLibraryFrame(std::string_view object) {
  for (std::string_view marker : {"libtorch", "libc10", "libdtype_lint", "libstdc++", "libc.so", "libgcc_s",
                                  "libgomp", "libpthread", "ld-linux", "libshm", "libcaffe2"})
    if (object.find(marker) != std::string_view::npos) return true;
  return false;
}

bool isLibraryHeader(std::string_view file) {
  if (file.rfind("/usr/include/", 0) == 0) return true;
  for (std::string_view marker :
       {"/ATen/", "/c10/", "/torch/csrc/", "/torch/include/", "/include/c++/", "/dtype_lint/annotate.h"})
    if (file.find(marker) != std::string_view::npos) return true;
  return false;
}

// One libdw session for the process, refreshed when a lookup misses (new dlopen).
class Symbolizer {
 public:
  std::optional<SourceLocation> lineOf(uintptr_t address) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!dwfl_ || attempt == 1) reload();
      if (!dwfl_) return std::nullopt;
      Dwfl_Module* module = dwfl_addrmodule(dwfl_, address);
      if (!module) continue;
      Dwfl_Line* line = dwfl_module_getsrc(module, address);
      if (!line) return std::nullopt;
      int lineNumber = 0, column = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &lineNumber, &column, nullptr, nullptr);
      if (!file || lineNumber <= 0) return std::nullopt;
      if (!isLibraryHeader(file))
        return SourceLocation{file, unsigned(lineNumber), unsigned(column), unsigned(lineNumber), unsigned(column)};
      return inlinedCallSite(module, address);
    }
    return std::nullopt;
  }

 private:
  // In an optimized build the address is often inside LibTorch's inline code
  // (Tensor::mm) inlined into the user's function: the line the user wrote
  // is the call site of the outermost inlined LibTorch function.
  static std::optional<SourceLocation> inlinedCallSite(Dwfl_Module* module, uintptr_t address) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* unit = dwfl_module_addrdie(module, address, &bias);
    Dwarf_Files* files = nullptr;
    if (!unit || dwarf_getsrcfiles(unit, &files, nullptr) != 0) return std::nullopt;
    Dwarf_Die* scopes = nullptr;
    const int count = dwarf_getscopes(unit, address - bias, &scopes);
    std::optional<SourceLocation> out;
    // Innermost first: each inlined subroutine's call site lies in the next scope out.
    for (int i = 0; i < count && !out; ++i) {
      if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
      Dwarf_Attribute attribute;
      Dwarf_Word fileIndex = 0, callLine = 0, callColumn = 0;
      if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attribute), &fileIndex) != 0 ||
          dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attribute), &callLine) != 0)
        continue;
      dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attribute), &callColumn);
      const char* file = dwarf_filesrc(files, fileIndex, nullptr, nullptr);
      if (file && callLine > 0 && !isLibraryHeader(file))
        out = SourceLocation{file, unsigned(callLine), unsigned(callColumn), unsigned(callLine), unsigned(callColumn)};
    }
    free(scopes);
    return out;
  }

  void reload() {
    if (dwfl_) dwfl_end(dwfl_);
    static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                             nullptr};
    dwfl_ = dwfl_begin(&callbacks);
    if (!dwfl_) return;
    if (dwfl_linux_proc_report(dwfl_, getpid()) != 0 || dwfl_report_end(dwfl_, nullptr, nullptr) != 0) {
      dwfl_end(dwfl_);
      dwfl_ = nullptr;
    }
  }

  std::mutex mutex_;
  Dwfl* dwfl_ = nullptr;
};

Symbolizer& symbolizer() {
  static Symbolizer* instance = new Symbolizer();  // never destroyed: used until the process ends
  return *instance;
}

}  // namespace

std::optional<SourceLocation> firstUserFrame(int skipUserFrames) {
  void* frames[96];
  const int count = backtrace(frames, 96);
  for (int i = 1; i < count; ++i) {
    Dl_info info{};
    if (!dladdr(frames[i], &info) || !info.dli_fname || isLibraryFrame(info.dli_fname)) continue;
    // A return address points after the call; look up the call itself.
    // Inline functions of LibTorch and the standard library are emitted into
    // the user's binary too: their header lines are not the user's.
    if (auto at = symbolizer().lineOf(reinterpret_cast<uintptr_t>(frames[i]) - 1)) {
      if (skipUserFrames-- > 0) continue;
      return at;
    }
  }
  return std::nullopt;
}

}  // namespace dtype_lint::runtime
