#include "dtype_lint/dl209_scaler_with_bfloat16.h"

#include <algorithm>

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

Finding scalerWithBFloat16Finding(const ObjectRef& scaler, const SourceLocation& at, const SourceLocation& scaledAt,
                                  const SourceLocation& bfloat16AutocastAt) {
  Finding f = makeFinding(RuleId::DL209,
                          fmt::format("{} unscales the gradients of a loss computed under BFloat16 autocast: BFloat16 "
                                      "has Float's range and needs no loss scaling; drop the scaler, or enable it only "
                                      "for Half",
                                      scaler.name),
                          scaledAt);
  f.notes.push_back(Note{at, std::string(kStepsHere)});
  f.notes.push_back(Note{bfloat16AutocastAt, "autocast enabled with BFloat16 here"});
  return f;
}

void anchorAtScaler(std::vector<Finding>& findings) {
  for (Finding& finding : findings) {
    if (!finding.rule || finding.rule->handle != RuleId::DL209) continue;
    auto noted = [&](std::string_view message) {
      return std::find_if(finding.notes.begin(), finding.notes.end(),
                          [&](const Note& note) { return note.message == message; });
    };
    // The BFloat16-autocast form is at its scale(), the BFloat16-parameters form at its step().
    const bool atScale = noted(kStepsHere) != finding.notes.end();
    auto anchor = noted(kScalerMadeHere);
    if (anchor == finding.notes.end() && !atScale) anchor = noted(kLossScaledHere);
    if (anchor == finding.notes.end()) continue;
    std::swap(finding.location, anchor->location);
    anchor->message = atScale ? kLossScaledHere : kStepsHere;
    std::rotate(finding.notes.begin(), anchor, anchor + 1);  // the scale() first, then the step()
  }
}

std::optional<SourceLocation> BFloat16LossSource::scaled(const AutocastState& now) {
  const auto openAt = bfloat16AutocastAt(now);
  const auto region = openAt ? openAt : closedAt_;
  closedAt_.reset();
  return region;
}

}  // namespace dtype_lint
