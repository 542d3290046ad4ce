// DL305: where a run's matmul FLOPs went, by the operands' dtypes, the dtype
// the GEMM ran in and whether autocast was on: a report, not a defect. It is
// a finding when autocast is on and a large share of the FLOPs still ran in
// Float32 or Double (autocast enabled for another device, a region that
// disables it, Double operands), or always when the user asks for the profile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dtype_lint/dtype.h"
#include "dtype_lint/finding.h"

namespace dtype_lint {

enum class AutocastAtGemm { Off, On, Unknown };  // Unknown: a cuBLAS call no dispatcher op announced

struct GemmKind {
  std::string operands;  // "Float x Float", "Half x Half"
  ScalarType ranIn;  // the dtype the GEMM computed in
  AutocastAtGemm autocast;
  friend bool operator<(const GemmKind& a, const GemmKind& b) {
    return std::tie(a.operands, a.ranIn, a.autocast) < std::tie(b.operands, b.ranIn, b.autocast);
  }
};

// A GEMM a dispatcher op ran: its first two floating operands' dtypes (one
// for a matrix-vector op), whether any operand is Double, and autocast.
struct DispatcherGemm {
  ScalarType first = ScalarType::Float;
  std::optional<ScalarType> second;
  bool anyDouble = false;
  std::optional<ScalarType> autocastDtype;  // autocast's, where it was on for the op's device
  bool autocastOn = false;  // on for the op's device or another
};
// It ran in autocast's dtype (the matmul family is on its lower-precision
// list) unless an operand is Double, which autocast leaves.
GemmKind kindOf(const DispatcherGemm& gemm);
// A cuBLAS call no dispatcher op announced: it computes in its A operand's
// dtype, or in Double where its compute type says so.
GemmKind kindOfCublasCall(ScalarType a, ScalarType b, bool computesInDouble);

class PrecisionProfile {
 public:
  // The share of autocast-on FLOPs in Float32/Double from which the profile is a finding.
  static constexpr double kFullPrecisionShareReported = 0.25;

  // always: the user asked for the profile (`dtype-lint run --profile`).
  explicit PrecisionProfile(bool always = false) : always_(always) {}

  // Whether a GEMM of this kind should have its call site attributed (the
  // front end then passes `site`): those that ran in full precision under
  // autocast (any GEMM when the profile was asked for), every one up to the
  // 64th, then one in 64.
  bool wantsSite(const GemmKind& kind);
  // Whether GEMMs of this kind can ever want a site (wantsSite): the others
  // need only their FLOPs added, in any order, at any time before finish().
  bool sitesMatter(const GemmKind& kind) const;
  void add(const GemmKind& kind, double flops, const std::optional<SourceLocation>& site);

  // The end-of-run finding, at the call site with the most sampled FLOPs in
  // full precision (with the most FLOPs where none ran in full precision).
  std::optional<Finding> finish() const;

 private:
  bool always_;
  std::map<GemmKind, double> flops_;
  struct Site {
    SourceLocation location;
    double flops = 0;
    double fullPrecisionFlops = 0;  // of those, in Float32 or Double
  };
  std::map<std::tuple<std::string, unsigned, std::string>, Site> sites_;
  uint64_t siteCandidates_ = 0;
};

// "1.2 GFLOP"
std::string flopsText(double flops);

}  // namespace dtype_lint
