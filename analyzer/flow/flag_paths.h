// Paths chosen by runtime flags. A root whose paths test flags the analysis
// cannot evaluate (a config's bool set from the command line, a bool
// parameter) is analyzed once per assignment of those flags: a bug on the path
// `use_half` selects is found on that one concrete path, and branches on the
// same flag agree instead of joining into "Half or Float". A finding that
// holds only under some assignments says which, as the Clang Static Analyzer
// names the conditions on a path.
#pragma once

#include <string>
#include <vector>

#include "clang/AST/Decl.h"
#include "dtype_lint/finding.h"
#include "flow/translation_unit.h"

namespace dtype_lint::analyzer::flow {

struct RuntimeFlag {
  const clang::ValueDecl* decl;  // canonical
  std::string spelling;          // as the first test spells it, quoted: 'cfg_.use_amp'
  SourceLocation firstTest;
};

// The flags whose value decides some work on the paths of `root` and of the
// user functions it calls (at most the limits' maxRuntimeFlags, nearest
// first): bools no code sets to a constant and whose value is not known.
std::vector<RuntimeFlag> runtimeFlags(const clang::FunctionDecl* root, TranslationUnitAnalysis& tu);

// One finding per place and rule from the runs under every assignment of
// `flags` (run r assumes flags[i] is bit i of r). A finding that no run with
// some flag's other value made notes the value it needs.
std::vector<Finding> mergeFlagRuns(const std::vector<RuntimeFlag>& flags, std::vector<std::vector<Finding>> runs);

}  // namespace dtype_lint::analyzer::flow
