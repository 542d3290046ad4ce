// Calls across translation units. A TU that calls user functions it has no
// body for (a Trainer's methods defined in trainer.cpp, called from main.cpp)
// is analyzed once more together with the files of the run that define them:
// their text is included after its own, so the in-context analysis follows
// those calls as it does within one file (the callee in the caller's dtypes,
// autocast state and scaler protocol, and back). No summary can lose context
// this way, and the result cache sees every linked file's content, so a
// change in a callee's file re-analyzes its callers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint::analyzer {

// What links one TU to the others, by USR: the functions its main file
// defines with external linkage, and the user functions it calls without a
// body.
struct Linkage {
  std::vector<std::string> defines;
  std::vector<std::string> calls;
  // The functions of linked files its analysis reached from their callers
  // here, while recording findings.
  std::vector<std::string> reached;
};

// The findings of a root that other translation units may call (an
// externally visible function nothing in this TU calls), analyzed with what
// its callers pass unknown. Where the analysis of a TU linked to this file
// reaches it from a caller (Linkage::reached), that analysis, in the caller's
// dtypes and autocast state, stands instead.
struct CallableRootFindings {
  std::string usr;
  std::vector<Finding> findings;
};

// For each file of a run, the other files whose functions it calls without a
// body, followed transitively from theirs, at most `maxFiles`. Where several
// files define one symbol (two programs in one tree), the definer sharing the
// most directories with the caller is taken, and none on a tie.
std::vector<std::vector<size_t>> linkedFiles(const std::vector<std::string>& files, const std::vector<Linkage>& linkage,
                                             size_t maxFiles);

// The caller's text followed by an #include of each linked file.
std::string withLinkedFiles(std::string text, const std::vector<std::string>& linked);

}  // namespace dtype_lint::analyzer
