// DL304: an optimizer eps that rounds to zero (or a subnormal) in the dtype of
// the parameters it updates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

namespace dtype_lint {

// The eps an optimizer class (LibTorch's name: "AdamW") uses when its options
// set none; unset for optimizers without one (SGD).
std::optional<double> defaultEpsilon(std::string_view optimizerClass);

// Where the source sets the eps, for a fix: the literal to replace, else the
// options expression to append .eps() to, else the parameters argument to
// append options after (`optionsClass`: "torch::optim::AdamWOptions").
struct EpsilonSpelling {
  std::optional<SourceLocation> literal;
  std::optional<SourceLocation> options;
  std::optional<SourceLocation> parameters;
  std::string optionsClass;
};

void checkOptimizerEpsilon(const std::string& optimizer, double eps, DtypeSet parameterDtype,
                           const std::optional<Note>& parametersOrigin, const SourceLocation& at,
                           std::vector<Finding>& out, const EpsilonSpelling& spelling = {});

}  // namespace dtype_lint
