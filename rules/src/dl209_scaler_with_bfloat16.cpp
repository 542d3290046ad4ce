#include "dtype_lint/dl209_scaler_with_bfloat16.h"

#include <fmt/format.h>

namespace dtype_lint {

std::optional<SourceLocation> bfloat16AutocastAt(const AutocastState& autocast) {
  std::optional<SourceLocation> at;
  for (const DeviceAutocast* device : {&autocast.cpu, &autocast.cuda}) {
    if (device->enabled != Tristate::On) continue;
    if (device->dtype.single() != ScalarType::BFloat16) return std::nullopt;
    at = device->enabledAt;
  }
  return at;
}

void checkScalerWithBFloat16(const ObjectRef& scaler, const SourceLocation& at,
                             const std::optional<SourceLocation>& bfloat16AutocastAt, std::vector<Finding>& out) {
  if (!bfloat16AutocastAt) return;
  Finding f = makeFinding(RuleId::DL209,
                          fmt::format("{} scales a loss computed under BFloat16 autocast: BFloat16 has Float's range "
                                      "and needs no loss scaling",
                                      scaler.name),
                          at);
  f.notes.push_back(Note{*bfloat16AutocastAt, "autocast enabled with BFloat16 here"});
  out.push_back(std::move(f));
}

void BFloat16LossSource::scaled(const ObjectRef& scaler, bool mayBeDisabled, const SourceLocation& at,
                                const AutocastState& now, std::vector<Finding>& out) {
  const auto openAt = bfloat16AutocastAt(now);
  if (!mayBeDisabled) checkScalerWithBFloat16(scaler, at, openAt ? openAt : closedAt_, out);
  closedAt_.reset();
}

}  // namespace dtype_lint
