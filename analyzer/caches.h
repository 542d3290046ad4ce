// What makes a second look at a translation unit cheap:
//  - the preamble cache: the LibTorch headers a TU starts with, parsed once
//    into a precompiled header (templates instantiated in it) that every TU
//    with the same headers and flags reuses, across files and runs;
//  - the result cache: a TU whose inputs did not change reports what it
//    reported last time without being parsed.
// Both live in one cache directory; entries are written atomically, so
// concurrent dtype-lint processes can share it.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "linked_units.h"
#include "llvm/ADT/StringRef.h"

namespace dtype_lint::analyzer {

// The text of a user header named by a quoted include, if it can be found.
using UserHeaderReader = std::function<std::optional<std::string>(llvm::StringRef quoted)>;

// The LibTorch headers the main file includes before any code, macro or user
// header of its own: the part of the TU a shared PCH can stand for. Where the
// first thing the file includes is its own header (trainer.cpp starting with
// "trainer.h", the common layout) and `readUserHeader` finds it, that
// header's own LibTorch prefix counts too: nothing precedes it.
std::vector<std::string> libTorchIncludePrefix(llvm::StringRef mainFileText,
                                               const UserHeaderReader& readUserHeader = {});

class PreambleCache {
 public:
  // sizeLimit: the bytes its PCHs may take; beyond it, the least recently
  // used are removed (each is ~120 MB with LibTorch's headers).
  explicit PreambleCache(std::string directory, uint64_t sizeLimit = kDefaultSizeLimit)
      : directory_(std::move(directory)), sizeLimit_(sizeLimit) {}
  static constexpr uint64_t kDefaultSizeLimit = uint64_t(2) << 30;

  // The PCH of `includes` for a TU compiled with `arguments` (the adjusted
  // command line without the input file) in `workingDirectory`: built once per
  // key and shared by the threads asking for it. nullopt when it cannot be
  // built: the TU is then parsed in full.
  std::optional<std::string> pchFor(const std::vector<std::string>& includes, const std::vector<std::string>& arguments,
                                    const std::string& workingDirectory);
  // A PCH that failed to load (its headers changed since): removed, so that
  // the next pchFor() builds it again.
  void discard(const std::string& pch);

 private:
  std::string directory_;
  uint64_t sizeLimit_;
  std::mutex mutex_;
  std::map<std::string, std::shared_future<std::optional<std::string>>> pchs_;
};

// Removes the least recently used preamble PCHs of a cache directory (and
// their headers) until they take at most `limit` bytes; never `keep`. A PCH
// removed while a TU is about to load it is rebuilt there (a stale preamble).
void evictLeastRecentlyUsedPchs(const std::string& cacheDirectory, uint64_t limit, const std::string& keep);

// A TU's analysis as the result cache keeps it.
struct CachedUnit {
  std::vector<Finding> findings;  // before rule selection and suppressions
  std::vector<CallableRootFindings> callableRoots;  // also before; see dtype_flow.h
  unsigned compileErrors = 0;
  std::string firstError;
  bool stoppedByFatalError = false;
  std::vector<std::string> userHeaders;  // the user headers the TU included
  std::vector<Note> toolNotes;  // functions whose analysis was cut short, and why
  Linkage linkage;  // what it defines for, and calls in, other TUs
  std::string failure;  // set when the TU could not be analyzed (never cached)
  bool overBudget = false;  // its time or memory budget ended it early (never cached)
};

class ResultCache {
 public:
  explicit ResultCache(std::string directory) : directory_(std::move(directory)) {}

  // The key of a TU: its main file's content, its command line, the config
  // and this tool's version.
  static std::string keyOf(const std::string& mainFileText, const std::vector<std::string>& commandLine,
                           const std::string& configFingerprint);
  // The stored result, when every user header it included is unchanged.
  std::optional<CachedUnit> lookup(const std::string& key) const;
  void store(const std::string& key, const CachedUnit& unit) const;

 private:
  std::string directory_;
};

}  // namespace dtype_lint::analyzer
