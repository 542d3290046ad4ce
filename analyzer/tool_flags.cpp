#include "tool_flags.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

namespace dtype_lint::analyzer {

namespace {

// GCC flags clang rejects or that point at GCC-only artifacts (its PCH files).
bool isGccOnly(llvm::StringRef arg) {
  return arg == "-Winvalid-pch" || arg.startswith("-fplugin") || arg == "-fno-gnu-unique" ||
         arg.startswith("-fconcepts-diagnostics-depth") || arg == "-fno-semantic-interposition" ||
         arg.startswith("-fmacro-prefix-map") || arg == "-fstack-clash-protection" || arg.startswith("-fcf-protection");
}

bool isGccPchInclude(llvm::StringRef arg) { return arg.endswith("cmake_pch.hxx") || arg.endswith(".gch"); }

// Flags that change the code a compiler emits or the warnings it prints, not
// what the analysis sees. Dropped, so that targets differing only in them
// share one preamble: a PCH must be loaded with the options it was built with.
bool isCodegenOrWarningOnly(llvm::StringRef arg) {
  if (arg.startswith("-O") || (arg.startswith("-g") && !arg.startswith("-gcc-toolchain")) ||
      (arg.startswith("-W") && !arg.startswith("-Wp,") && !arg.startswith("-Wl,") && !arg.startswith("-Wa,")))
    return true;
  return llvm::StringSwitch<bool>(arg)
      .Cases("-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pie", "-pipe", true)
      .Cases("-fomit-frame-pointer", "-fno-omit-frame-pointer", "-ffunction-sections", "-fdata-sections", true)
      .Cases("-fcolor-diagnostics", "-fno-color-diagnostics", "-fdiagnostics-color", "-fno-plt", true)
      .Cases("-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables", "-pedantic", "-pedantic-errors", true)
      .StartsWith("-fdiagnostics-color=", true)
      .StartsWith("-fstack-protector", true)
      .StartsWith("-fvisibility", true)
      .StartsWith("-flto", true)
      .Default(false);
}

}  // namespace

clang::tooling::ArgumentsAdjuster analyzerArgumentsAdjuster() {
  return [](const clang::tooling::CommandLineArguments& args, llvm::StringRef) {
    clang::tooling::CommandLineArguments out;
    for (size_t i = 0; i < args.size(); ++i) {
      llvm::StringRef arg = args[i];
      if (i > 0 && (isGccOnly(arg) || isCodegenOrWarningOnly(arg))) continue;
      if ((arg == "-include" || arg == "-include-pch") && i + 1 < args.size() && isGccPchInclude(args[i + 1])) {
        ++i;
        continue;
      }
      out.push_back(args[i]);
    }
    out = clang::tooling::getClangSyntaxOnlyAdjuster()(out, "");
    out = clang::tooling::getClangStripOutputAdjuster()(out, "");
    out = clang::tooling::getClangStripDependencyFileAdjuster()(out, "");
    // No carets: clang would print "N errors generated." past our diagnostic consumer.
    out.insert(out.begin() + 1,
               {"-resource-dir=" DTYPE_LINT_CLANG_RESOURCE_DIR, "-Wno-everything", "-fno-caret-diagnostics"});
    return out;
  };
}

std::vector<std::string> fallbackFlags() {
  std::vector<std::string> flags{"-std=c++17"};
  llvm::StringRef dirs = DTYPE_LINT_TORCH_INCLUDE_DIRS;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  dirs.split(parts, ':', -1, false);
  for (llvm::StringRef dir : parts) flags.push_back("-I" + dir.str());
  return flags;
}

}  // namespace dtype_lint::analyzer
