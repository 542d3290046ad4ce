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
  // Both start at the same file, line and column (two facts from one place).
  bool sameStart(const SourceLocation& other) const {
    return file == other.file && line == other.line && column == other.column;
  }
  // `at` starts inside this extent (a statement's, a function's).
  bool contains(const SourceLocation& at) const {
    auto notAfter = [](unsigned l, unsigned c, unsigned otherL, unsigned otherC) {
      return l < otherL || (l == otherL && c <= otherC);
    };
    return at.file == file && notAfter(line, column, at.line, at.column) &&
           notAfter(at.line, at.column, endLine, endColumn);
  }

  // The file's first line: where a note about the whole file points.
  static SourceLocation startOf(std::string file) {
    SourceLocation at;
    at.file = std::move(file);
    at.line = at.column = at.endLine = at.endColumn = 1;
    return at;
  }
};

struct Note {
  SourceLocation location;
  std::string message;
};

// One edit of a fix: the range's text replaced. An insertion has an empty
// range: on one line, its end column one before its start.
struct Edit {
  SourceLocation range;
  std::string replacement;
};
Edit insertBefore(const SourceLocation& range, std::string text);
Edit insertAfter(const SourceLocation& range, std::string text);
Edit replace(const SourceLocation& range, std::string text);

// Where the fix is unambiguous: the edits that make the finding go away
// without changing anything else the code computes.
struct FixIt {
  std::string description;  // "insert 'scaler.unscale_(optimizer);' before the clip"
  std::vector<Edit> edits;
};

struct Finding {
  const RuleInfo* rule = nullptr;
  Severity severity = Severity::Warning;
  std::string message;
  SourceLocation location;
  std::vector<Note> notes;
  std::optional<FixIt> fix;
  // The distributed ranks (torch.distributed's RANK) of the processes that
  // made it, sorted; empty outside a distributed run.
  std::vector<unsigned> ranks;
};

// " (ranks 0–3)", " (rank 2)"; empty for no ranks.
std::string ranksSuffix(const std::vector<unsigned>& ranks);
// The message as reports show it: with its ranks' suffix.
std::string displayMessage(const Finding& finding);

// A finding of a catalog rule, with the rule's default severity.
Finding makeFinding(RuleId rule, std::string message, const SourceLocation& at, std::vector<Note> notes = {});

// Orders findings by file, line, column, then rule, for deterministic output.
bool locationOrder(const Finding& a, const Finding& b);

}  // namespace dtype_lint
