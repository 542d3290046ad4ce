#include "python_analysis.h"

#include "interpreter.h"

namespace dtype_lint::python {

PythonAnalysisResult analyzePythonFiles(const std::vector<std::string>& files) {
  // Python users run PyTorch 2.x: its autocast op lists.
  Interpreter interpreter(TorchVersion{2, 0});
  interpreter.run(files);
  PythonAnalysisResult result;
  result.findings = std::move(interpreter.findings());
  result.toolNotes = std::move(interpreter.toolNotes());
  result.lines = interpreter.linesParsed();
  return result;
}

}  // namespace dtype_lint::python
