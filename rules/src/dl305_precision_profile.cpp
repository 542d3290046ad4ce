#include "dtype_lint/dl305_precision_profile.h"

#include <fmt/format.h>

#include <algorithm>

namespace dtype_lint {
namespace {

bool fullPrecision(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double; }

std::string_view autocastText(AutocastAtGemm a) {
  switch (a) {
  case AutocastAtGemm::On: return "autocast on";
  case AutocastAtGemm::Off: return "autocast off";
  case AutocastAtGemm::Unknown: return "cuBLAS, outside the dispatcher";
  }
  return "";
}

}  // namespace

GemmKind kindOf(const DispatcherGemm& gemm) {
  const bool cast = gemm.autocastDtype && !gemm.anyDouble;
  const ScalarType ranIn = cast ? *gemm.autocastDtype : gemm.anyDouble ? ScalarType::Double : gemm.first;
  return {std::string(name(gemm.first)) + (gemm.second ? " x " + std::string(name(*gemm.second)) : ""), ranIn,
          gemm.autocastOn ? AutocastAtGemm::On : AutocastAtGemm::Off};
}

GemmKind kindOfCublasCall(ScalarType a, ScalarType b, bool computesInDouble) {
  return {std::string(name(a)) + " x " + std::string(name(b)), computesInDouble ? ScalarType::Double : a,
          AutocastAtGemm::Unknown};
}

std::string flopsText(double flops) {
  constexpr std::pair<double, const char*> kUnits[] = {
      {1e15, "PFLOP"}, {1e12, "TFLOP"}, {1e9, "GFLOP"}, {1e6, "MFLOP"}, {1e3, "kFLOP"}};
  for (const auto& [scale, unit] : kUnits)
    if (flops >= scale) return fmt::format("{:.3g} {}", flops / scale, unit);
  return fmt::format("{:.3g} FLOP", flops);
}

bool PrecisionProfile::sitesMatter(const GemmKind& kind) const {
  return always_ || (kind.autocast == AutocastAtGemm::On && fullPrecision(kind.ranIn));
}

bool PrecisionProfile::wantsSite(const GemmKind& kind) {
  if (!sitesMatter(kind)) return false;
  return ++siteCandidates_ <= 64 || siteCandidates_ % 64 == 0;
}

void PrecisionProfile::add(const GemmKind& kind, double flops, const std::optional<SourceLocation>& site) {
  flops_[kind] += flops;
  if (!site || !site->valid()) return;
  Site& at = sites_[{site->file, site->line, site->symbol}];
  at.location = *site;
  at.flops += flops;
  if (fullPrecision(kind.ranIn)) at.fullPrecisionFlops += flops;
}

std::optional<Finding> PrecisionProfile::finish() const {
  double total = 0, underAutocast = 0, fullUnderAutocast = 0;
  for (const auto& [kind, flops] : flops_) {
    total += flops;
    if (kind.autocast != AutocastAtGemm::On) continue;
    underAutocast += flops;
    if (fullPrecision(kind.ranIn)) fullUnderAutocast += flops;
  }
  if (total <= 0) return std::nullopt;
  const double share = underAutocast > 0 ? fullUnderAutocast / underAutocast : 0;
  const bool worthReporting = share >= kFullPrecisionShareReported;
  if (!worthReporting && !always_) return std::nullopt;

  std::vector<std::pair<GemmKind, double>> kinds(flops_.begin(), flops_.end());
  std::sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> split;
  for (const auto& [kind, flops] : kinds)
    split.push_back(fmt::format("{:.0f}% {} ran in {} ({})", 100 * flops / total, kind.operands, name(kind.ranIn),
                                autocastText(kind.autocast)));
  const std::string splitText = fmt::format("{}", fmt::join(split, "; "));
  std::string message =
      worthReporting
          ? fmt::format("{:.0f}% of the matmul FLOPs under autocast ran in Float32 or Double ({} of {}): autocast "
                        "did not cast them (autocast enabled for another device, a region that disables it, Double "
                        "operands, or ops it does not cast); all {} of GEMMs: {}",
                        100 * share, flopsText(fullUnderAutocast), flopsText(underAutocast), flopsText(total),
                        splitText)
          : fmt::format("precision profile of {} of GEMMs: {}", flopsText(total), splitText);

  // At the site of the most full-precision FLOPs (what the finding asks to
  // change), then the others by their FLOPs.
  std::vector<Site> sites;
  for (const auto& [key, site] : sites_) sites.push_back(site);
  std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) {
    return std::tie(a.fullPrecisionFlops, a.flops) > std::tie(b.fullPrecisionFlops, b.flops);
  });
  if (sites.size() > 3) sites.resize(3);
  Finding f = makeFinding(RuleId::DL305, std::move(message), sites.empty() ? SourceLocation{} : sites.front().location);
  for (const Site& site : sites)
    f.notes.push_back(Note{site.location,
                           worthReporting && site.fullPrecisionFlops > 0
                               ? flopsText(site.fullPrecisionFlops) + " in full precision under autocast here (sampled)"
                               : flopsText(site.flops) + " of GEMMs here (sampled)"});
  return f;
}

}  // namespace dtype_lint
