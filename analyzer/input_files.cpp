#include "input_files.h"

#include "llvm/Support/FileSystem.h"

namespace dtype_lint::analyzer {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputFile(const std::string& path) {
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return llvm::createStringError(error, error.message().c_str());
  if (llvm::sys::fs::is_directory(status))
    return llvm::createStringError(std::make_error_code(std::errc::is_a_directory), "it is a directory");
  if (!llvm::sys::fs::is_regular_file(status))
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "not a regular file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) return llvm::createStringError(buffer.getError(), buffer.getError().message().c_str());
  return std::move(*buffer);
}

std::optional<std::string> tooDeeplyNested(llvm::StringRef text) {
  size_t depth = 0, line = 1, lineStart = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return std::to_string(line) + ":" + std::to_string(i - lineStart + 1);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace dtype_lint::analyzer
