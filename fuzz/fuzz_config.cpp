// .dtype-lint.yaml and --config '{...}': any text gives a config or one error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config.h"
#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  auto config = dtype_lint::analyzer::parseConfig(text, "fuzz.yaml", "/fuzz");
  if (!config) {
    llvm::consumeError(config.takeError());
    return 0;
  }
  // What --dump-config prints must read back.
  auto again = dtype_lint::analyzer::parseConfig(dtype_lint::analyzer::dumpConfig(*config), "dump.yaml", "/fuzz");
  if (!again) __builtin_trap();
  return 0;
}
