// Reading what users hand the tool (configs, compile databases, baselines,
// reports, cache entries): regular files only (a FIFO would block the run, a
// device never end), and text nested no deeper than the parsers, which
// recurse, can take.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace dtype_lint::analyzer {

// The file's bytes; why not ("not a regular file", "Permission denied").
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputFile(const std::string& path);

// JSON or YAML flow collections nested deeper than this are refused.
constexpr size_t kMaxNesting = 256;

// Where the text opens its (kMaxNesting+1)th nested [ or { (quoted strings
// skipped), as "line:column"; nothing when it stays within the limit.
std::optional<std::string> tooDeeplyNested(llvm::StringRef text);

}  // namespace dtype_lint::analyzer
