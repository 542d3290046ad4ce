// What every finding carries, whichever front end made it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/catalog.h"

namespace dtype_lint {

// A source range; columns are 1-based, endColumn is inclusive.
struct SourceLocation {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  unsigned endLine = 0;
  unsigned endColumn = 0;
  // Where a runtime finding's binary has no line table: `file` is the binary,
  // and this says where in it ("train_step(Batch const&)+0x4c", or "+0x1a2c"
  // in a stripped one); `line` is 0.
  std::string symbol;

  bool valid() const { return !file.empty() && (line != 0 || !symbol.empty()); }
};

struct Note {
  SourceLocation location;
  std::string message;
};

struct FixIt {
  SourceLocation range;  // the text to replace
  std::string replacement;
};

struct Finding {
  const RuleInfo* rule = nullptr;
  Severity severity = Severity::Warning;
  std::string message;
  SourceLocation location;
  std::vector<Note> notes;
  std::optional<FixIt> fixIt;
};

// A finding of a catalog rule, with the rule's default severity.
Finding makeFinding(std::string_view ruleId, std::string message, const SourceLocation& at,
                    std::vector<Note> notes = {});

// Orders findings by file, line, column, then rule, for deterministic output.
bool locationOrder(const Finding& a, const Finding& b);

}  // namespace dtype_lint
