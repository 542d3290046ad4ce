#include "dtype_lint/dl304_optimizer_epsilon.h"

#include <fmt/format.h>

namespace dtype_lint {

std::optional<double> defaultEpsilon(std::string_view optimizerClass) {
  if (optimizerClass == "Adam" || optimizerClass == "AdamW") return 1e-8;
  return std::nullopt;
}

void checkOptimizerEpsilon(const std::string& optimizer, double eps, DtypeSet parameterDtype,
                           const std::optional<Note>& parametersOrigin, const SourceLocation& at,
                           std::vector<Finding>& out) {
  const auto dtype = parameterDtype.single();
  if (!dtype || !isFloating(*dtype) || eps >= smallestNormal(*dtype)) return;
  const bool zero = eps < smallestSubnormal(*dtype) / 2;
  Finding f = makeFinding(
      "DL304",
      fmt::format("{} eps={} is {} in {}, the dtype of its parameters{}", optimizer, fmt::format("{:g}", eps),
                  zero ? "zero" : "subnormal", name(*dtype),
                  zero ? ": the update divides by sqrt(v) + 0 and blows up where v underflows"
                       : ": it loses its precision and barely guards the division"),
      at);
  if (parametersOrigin) f.notes.push_back(*parametersOrigin);
  out.push_back(std::move(f));
}

}  // namespace dtype_lint
