#include "dtype_lint/dl304_optimizer_epsilon.h"

#include <fmt/format.h>

#include <cmath>

namespace dtype_lint {

std::optional<double> defaultEpsilon(std::string_view optimizerClass) {
  if (optimizerClass == "Adam" || optimizerClass == "AdamW") return 1e-8;
  return std::nullopt;
}

namespace {

// The smallest power of ten that is a normal number of the dtype: 1e-4 for Half.
std::string representableEpsilon(ScalarType dtype) {
  return fmt::format("1e{}", int(std::ceil(std::log10(smallestNormal(dtype)))));
}

std::optional<FixIt> epsilonFix(const EpsilonSpelling& spelling, ScalarType dtype) {
  const std::string eps = representableEpsilon(dtype);
  if (spelling.literal) return FixIt{"eps=" + eps, {replace(*spelling.literal, eps)}};
  if (spelling.options) return FixIt{"set eps(" + eps + ")", {insertAfter(*spelling.options, ".eps(" + eps + ")")}};
  if (spelling.parameters && !spelling.optionsClass.empty())
    return FixIt{"pass " + spelling.optionsClass + "().eps(" + eps + ")",
                 {insertAfter(*spelling.parameters, ", " + spelling.optionsClass + "().eps(" + eps + ")")}};
  return std::nullopt;
}

}  // namespace

void checkOptimizerEpsilon(const std::string& optimizer, double eps, DtypeSet parameterDtype,
                           const std::optional<Note>& parametersOrigin, const SourceLocation& at,
                           std::vector<Finding>& out, const EpsilonSpelling& spelling) {
  const auto dtype = parameterDtype.single();
  if (!dtype || !isFloating(*dtype) || eps >= smallestNormal(*dtype)) return;
  const bool zero = eps < smallestSubnormal(*dtype) / 2;
  Finding f = makeFinding(RuleId::DL304,
                          fmt::format("{} eps={} is {} in {}, the dtype of its parameters{}", optimizer,
                                      fmt::format("{:g}", eps), zero ? "zero" : "subnormal", name(*dtype),
                                      zero ? ": the update divides by sqrt(v) + 0 and blows up where v underflows"
                                           : ": it loses its precision and barely guards the division"),
                          at);
  if (parametersOrigin) f.notes.push_back(*parametersOrigin);
  f.fix = epsilonFix(spelling, *dtype);
  out.push_back(std::move(f));
}

}  // namespace dtype_lint
