// --baseline FILE: any bytes are a baseline or one error.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "baseline.h"
#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/dtype_lint_fuzz_baseline_" + std::to_string(getpid()) + ".json";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), size);
  auto baseline = dtype_lint::cli::readBaseline(path);
  if (!baseline) llvm::consumeError(baseline.takeError());
  return 0;
}
