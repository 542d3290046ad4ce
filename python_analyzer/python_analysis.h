// The Python front end: `dtype-lint train.py` and the .py files under
// `dtype-lint src/`. Parses them with tree-sitter, follows them as a program
// (python_analyzer/interpreter.h) and reports through the rule core, as the
// C++ analyzer does. No LLVM, no LibTorch, no Python interpreter.
#pragma once

#include <string>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint::python {

struct PythonAnalysisResult {
  std::vector<Finding> findings;  // as the rules made them: the findings pipeline selects and orders
  std::vector<Note> toolNotes;  // files that did not parse, analyses cut short
  size_t lines = 0;  // lines parsed, imported files included
};

// Analyzes the files as one tree: imports between them, and of files next to
// them, resolve; each file runs as `__main__`, then what no run reached runs
// from unknown arguments.
PythonAnalysisResult analyzePythonFiles(const std::vector<std::string>& files);

}  // namespace dtype_lint::python
