#include "linked_units.h"

#include <deque>
#include <map>
#include <optional>
#include <set>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

namespace dtype_lint::analyzer {

namespace {

size_t sharedDirectories(llvm::StringRef a, llvm::StringRef b) {
  auto ai = llvm::sys::path::begin(llvm::sys::path::parent_path(a));
  auto bi = llvm::sys::path::begin(llvm::sys::path::parent_path(b));
  const auto aEnd = llvm::sys::path::end(llvm::sys::path::parent_path(a));
  const auto bEnd = llvm::sys::path::end(llvm::sys::path::parent_path(b));
  size_t shared = 0;
  for (; ai != aEnd && bi != bEnd && *ai == *bi; ++ai, ++bi) ++shared;
  return shared;
}

std::optional<size_t> nearestDefiner(const std::vector<std::string>& files, size_t caller,
                                     const std::vector<size_t>& definers) {
  std::optional<size_t> best;
  size_t bestShared = 0;
  bool tie = false;
  for (size_t d : definers) {
    if (d == caller) return std::nullopt;  // defined here after all
    const size_t shared = sharedDirectories(files[caller], files[d]);
    if (!best || shared > bestShared) {
      best = d;
      bestShared = shared;
      tie = false;
    } else if (shared == bestShared) {
      tie = true;
    }
  }
  return tie ? std::nullopt : best;
}

}  // namespace

std::vector<std::vector<size_t>> linkedFiles(const std::vector<std::string>& files, const std::vector<Linkage>& linkage,
                                             size_t maxFiles) {
  std::map<std::string, std::vector<size_t>> definers;
  for (size_t i = 0; i < linkage.size(); ++i)
    for (const std::string& usr : linkage[i].defines) definers[usr].push_back(i);
  std::vector<std::vector<size_t>> out(files.size());
  for (size_t root = 0; root < files.size(); ++root) {
    std::set<size_t> seen{root};
    std::deque<size_t> todo{root};
    while (!todo.empty() && out[root].size() < maxFiles) {
      const size_t unit = todo.front();
      todo.pop_front();
      for (const std::string& usr : linkage[unit].calls) {
        const auto found = definers.find(usr);
        if (found == definers.end()) continue;
        const auto definer = nearestDefiner(files, root, found->second);
        if (!definer || !seen.insert(*definer).second) continue;
        out[root].push_back(*definer);
        todo.push_back(*definer);
        if (out[root].size() == maxFiles) break;
      }
    }
  }
  return out;
}

std::string withLinkedFiles(std::string text, const std::vector<std::string>& linked) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  for (const std::string& file : linked) text += "#include \"" + file + "\"\n";
  return text;
}

}  // namespace dtype_lint::analyzer
