// compile_commands.json: any text is a database whose entries can be listed
// and queried, or one error.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "compilation.h"
#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    char path[] = "/tmp/dtype_lint_fuzz_db_XXXXXX";
    const std::string made = mkdtemp(path);
    std::ofstream(made + "/train.cpp") << "int main() {}\n";
    return made;
  }();
  std::ofstream(dir + "/compile_commands.json", std::ios::binary).write(reinterpret_cast<const char*>(data), size);
  auto work = dtype_lint::analyzer::selectWork({dir + "/train.cpp"}, dir);
  if (!work) {
    llvm::consumeError(work.takeError());
    return 0;
  }
  for (const std::string& file : work->files) work->database->getCompileCommands(file);
  return 0;
}
