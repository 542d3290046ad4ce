// `dtype-lint merge`: any bytes are a JSON or SARIF report of this tool or one
// error; what is read can be written again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype_lint/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<dtype_lint::Finding> findings;
  std::vector<dtype_lint::Note> notes;
  std::string error;
  if (!dtype_lint::readReport(text, "/fuzz", findings, notes, error)) return 0;
  for (const dtype_lint::Finding& f : findings) dtype_lint::findingToJsonLine(f);
  return 0;
}
