#include "user_frame.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "python_frames.h"

namespace dtype_lint::runtime {
namespace {

// Shared objects whose frames are never the user's code.
bool isLibraryFrame(std::string_view object) {
  for (std::string_view marker : {"libtorch", "libc10", "libdtype_lint", "libstdc++", "libc.so", "libgcc_s", "libgomp",
                                  "libpthread", "ld-linux", "libshm", "libcaffe2", "libpython", ".cpython-", "libffi"})
    if (object.find(marker) != std::string_view::npos) return true;
  // The Python interpreter: a Python program's lines are in its own frames.
  const std::string_view name = object.substr(object.rfind('/') + 1);
  return name.rfind("python", 0) == 0;
}

bool isLibraryHeader(std::string_view file) {
  if (file.rfind("/usr/include/", 0) == 0) return true;
  for (std::string_view marker :
       {"/ATen/", "/c10/", "/torch/csrc/", "/torch/include/", "/include/c++/", "/dtype_lint/annotate.h"})
    if (file.find(marker) != std::string_view::npos) return true;
  return false;
}

// A demangled function name in LibTorch's or the standard library's
// namespaces; a function template's return type may come first.
bool isLibraryFunction(std::string_view function) {
  int depth = 0;
  for (size_t i = 0; i < function.size() && !(depth == 0 && function[i] == '('); ++i) {
    if (function[i] == '<') ++depth;
    if (function[i] == '>') --depth;
    if (depth != 0 || (i > 0 && function[i - 1] != ' ')) continue;
    for (std::string_view ns : {"at::", "c10::", "torch::", "caffe2::", "std::", "__gnu_cxx::"})
      if (function.substr(i).starts_with(ns)) return true;
  }
  return false;
}

// One libdw session for the process, refreshed when a lookup misses (new dlopen).
class Symbolizer {
 public:
  // The user's lines at `address`, innermost first: the line itself, then
  // the call sites of the functions inlined there (an optimized build folds
  // a scaler's method and LibTorch's inline code into its caller's frame).
  // Lines in LibTorch's and the standard library's headers are not the user's.
  std::vector<SourceLocation> userLinesOf(uintptr_t address) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!dwfl_ || attempt == 1) reload();
      if (!dwfl_) return {};
      Dwfl_Module* module = dwfl_addrmodule(dwfl_, address);
      if (!module) continue;
      Dwfl_Line* line = dwfl_module_getsrc(module, address);
      if (!line) return {};
      int lineNumber = 0, column = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &lineNumber, &column, nullptr, nullptr);
      if (!file || lineNumber <= 0) return {};
      std::vector<SourceLocation> out;
      if (!isLibraryHeader(file))
        out.push_back(
            SourceLocation{file, unsigned(lineNumber), unsigned(column), unsigned(lineNumber), unsigned(column)});
      inlinedCallSites(module, address, out);
      return out;
    }
    return {};
  }

 private:
  static void inlinedCallSites(Dwfl_Module* module, uintptr_t address, std::vector<SourceLocation>& out) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* unit = dwfl_module_addrdie(module, address, &bias);
    Dwarf_Files* files = nullptr;
    if (!unit || dwarf_getsrcfiles(unit, &files, nullptr) != 0) return;
    // dwarf_getscopes leaves an inlined function for its abstract definition's
    // scopes; the DIEs physically around the innermost scope are the inlining chain.
    Dwarf_Die* scopes = nullptr;
    const int found = dwarf_getscopes(unit, address - bias, &scopes);
    Dwarf_Die innermost = found > 0 ? scopes[0] : Dwarf_Die{};
    free(scopes);
    scopes = nullptr;
    if (found <= 0) return;
    const int count = dwarf_getscopes_die(&innermost, &scopes);
    // Innermost first: each inlined subroutine's call site lies in the next scope out.
    for (int i = 0; i < count; ++i) {
      if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
      Dwarf_Attribute attribute;
      Dwarf_Word fileIndex = 0, callLine = 0, callColumn = 0;
      if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attribute), &fileIndex) != 0 ||
          dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attribute), &callLine) != 0)
        continue;
      dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attribute), &callColumn);
      const char* file = dwarf_filesrc(files, fileIndex, nullptr, nullptr);
      if (file && callLine > 0 && !isLibraryHeader(file))
        out.push_back(
            SourceLocation{file, unsigned(callLine), unsigned(callColumn), unsigned(callLine), unsigned(callColumn)});
    }
    free(scopes);
  }

 public:
  // Whether the binary holding `address` has debug info (a line table).
  bool hasLineTable(uintptr_t address) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!dwfl_) return false;
    Dwfl_Module* module = dwfl_addrmodule(dwfl_, address);
    Dwarf_Addr bias = 0;
    return module && dwfl_module_getdwarf(module, &bias) != nullptr;
  }

  // Where `address` is in a binary without a line table: its function and
  // the offset into it (from the symbol table), else the offset into the
  // binary. None for an out-of-line copy of LibTorch's or the standard
  // library's inline code (at::Tensor::backward): not the user's function.
  std::optional<SourceLocation> binaryLocationOf(uintptr_t address, const std::string& object, uintptr_t objectBase) {
    SourceLocation at;
    at.file = object;
    std::lock_guard<std::mutex> lock(mutex_);
    GElf_Off offset = 0;
    GElf_Sym symbol;
    Dwfl_Module* module = dwfl_ ? dwfl_addrmodule(dwfl_, address) : nullptr;
    const char* name =
        module ? dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr) : nullptr;
    if (!name) {
      at.symbol = fmt::format("+{:#x}", address - objectBase);
      return at;
    }
    int status = 0;
    char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    const std::string function = status == 0 && demangled ? demangled : name;
    free(demangled);
    if (isLibraryFunction(function)) return std::nullopt;
    at.symbol = fmt::format("{}+{:#x}", function, offset);
    return at;
  }

 private:
  void reload() {
    if (dwfl_) dwfl_end(dwfl_);
    static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr, nullptr};
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

// The binary's full path (dladdr names the main program as it was started).
std::string executablePath(const char* object) {
  if (object && object[0] == '/') return object;
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, size_t(n)) : std::string(object ? object : "");
}

Symbolizer& symbolizer() {
  static Symbolizer* instance = new Symbolizer();  // never destroyed: used until the process ends
  return *instance;
}

}  // namespace

bool issuedByLibTorchFrontend() {
  // Deep enough for the dispatcher's frames and the rule that asks (through a std::function).
  void* frames[128];
  const int count = backtrace(frames, 128);
  for (int i = 1; i < count; ++i) {
    Dl_info info{};
    if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
    if (!isLibraryFrame(info.dli_fname)) return false;  // the user's frame came first
    if (!info.dli_sname || std::string_view(info.dli_fname).find("libtorch") == std::string_view::npos) continue;
    int status = 0;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    const bool frontend = status == 0 && std::string_view(demangled).starts_with("torch::nn::");
    std::free(demangled);
    if (frontend) return true;
  }
  return false;
}

namespace {

// The first user frame among return addresses, innermost first.
std::optional<SourceLocation> firstUserFrameAmong(void* const* frames, int count, int skipUserFrames) {
  // The user's frames in binaries without debug info, innermost first.
  std::vector<SourceLocation> withoutLines;
  for (int i = 1; i < count; ++i) {
    Dl_info info{};
    if (!dladdr(frames[i], &info) || !info.dli_fname || isLibraryFrame(info.dli_fname)) continue;
    // A return address points after the call; look up the call itself.
    // Inline functions of LibTorch and the standard library are emitted into
    // the user's binary too: their header lines are not the user's.
    const uintptr_t call = reinterpret_cast<uintptr_t>(frames[i]) - 1;
    const std::vector<SourceLocation> lines = symbolizer().userLinesOf(call);
    for (const SourceLocation& at : lines)
      if (skipUserFrames-- <= 0) return at;
    if (!lines.empty() || symbolizer().hasLineTable(call)) continue;
    if (auto at = symbolizer().binaryLocationOf(call, executablePath(info.dli_fname),
                                                reinterpret_cast<uintptr_t>(info.dli_fbase)))
      withoutLines.push_back(std::move(*at));
  }
  // Never dropped: a finding in a build without -g points at the function
  // (the skipped frames may be inlined into it), in a stripped binary at the
  // offsets of the call and its callers, which tell call sites apart.
  if (withoutLines.empty()) return std::nullopt;
  const size_t chosen = std::min(withoutLines.size() - 1, size_t(std::max(skipUserFrames, 0)));
  SourceLocation at = withoutLines[chosen];
  for (size_t caller = chosen + 1; caller < withoutLines.size() && caller <= chosen + 3; ++caller)
    if (at.symbol.starts_with("+0x") && withoutLines[caller].file == at.file)
      at.symbol += " < " + withoutLines[caller].symbol;
  return at;
}

}  // namespace

std::optional<SourceLocation> firstUserFrame(int skipUserFrames) {
  // A Python program's line is in its interpreter's frames, not the native ones.
  if (auto python = userPythonFrame()) return python->at;
  void* frames[96];
  const int count = backtrace(frames, 96);
  return firstUserFrameAmong(frames, count, skipUserFrames);
}

CapturedSite captureSite() {
  CapturedSite site;
  if (auto python = userPythonFrame()) {
    site.python = python->at;
    site.inLibraryCode = python->callsLibraryCode;
    return site;
  }
  void* frames[64];
  const int count = backtrace(frames, 64);
  site.frames.assign(frames, frames + count);
  return site;
}

std::optional<SourceLocation> firstUserFrameOf(const CapturedSite& site) {
  if (site.python) return site.python;
  return firstUserFrameAmong(site.frames.data(), static_cast<int>(site.frames.size()), 0);
}

}  // namespace dtype_lint::runtime
