// The runtime's options from the environment (DTYPE_LINT_* variables, as
// `dtype-lint run` or the user sets them): any values give options or a
// named error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype_lint/numeric_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // NUL-separated values, handed to the variables in the order they are asked for.
  std::vector<std::string> values;
  std::string current;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      values.push_back(current);
      current.clear();
    } else {
      current += char(data[i]);
    }
  }
  values.push_back(current);
  size_t next = 0;
  std::string error;
  const auto options = dtype_lint::numericHealthOptionsFrom(
      [&](const char*) -> const char* { return next < values.size() ? values[next++].c_str() : nullptr; }, error);
  dtype_lint::NumericHealthRules rules(options);
  return 0;
}
