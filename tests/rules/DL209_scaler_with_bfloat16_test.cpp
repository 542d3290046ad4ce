// DL209 scaler-with-bfloat16: when a scaler is pointless, and where the protocol reports BFloat16 parameters
// (LibTorch-free).
// Its samples are samples/DL209_scaler_with_bfloat16/; its analyzer cases are the `dtype-lint-expect: DL209` markers in
// tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_lint/dl209_scaler_with_bfloat16.h"
#include "protocol_fixture.h"

namespace dtype_lint {
namespace {

AutocastState autocastOn(ScalarType cpu, std::optional<ScalarType> cuda) {
  AutocastState state;
  state.cpu = DeviceAutocast{Tristate::On, DtypeSet(cpu), at(5)};
  if (cuda) state.cuda = DeviceAutocast{Tristate::On, DtypeSet(*cuda), at(6)};
  return state;
}

TEST(ScalerWithBFloat16, OnlyWhenEveryEnabledDeviceAutocastsToBFloat16) {
  EXPECT_FALSE(bfloat16AutocastAt(AutocastState{}));  // autocast off
  const auto cpuOnly = bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, std::nullopt));
  ASSERT_TRUE(cpuOnly);
  EXPECT_EQ(cpuOnly->line, 5u);
  EXPECT_TRUE(bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::BFloat16)));
  EXPECT_FALSE(bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::Half)));
  AutocastState maybe = autocastOn(ScalarType::BFloat16, std::nullopt);
  maybe.cpu.enabled = Tristate::Unknown;
  EXPECT_FALSE(bfloat16AutocastAt(maybe));

  std::vector<Finding> out;
  const ObjectRef scaler{1, "'scaler'"};
  checkScalerWithBFloat16(scaler, at(7), bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, ScalarType::Half)), out);
  EXPECT_TRUE(out.empty());
  checkScalerWithBFloat16(scaler, at(7), bfloat16AutocastAt(autocastOn(ScalarType::BFloat16, std::nullopt)), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->id, std::string("DL209"));
}

// The flow fact: scale() right after a BFloat16 region closed scales its
// loss; a second scale() with no region between scales another loss; a path
// where no region closed (a join) reports nothing; a scaler that may be
// disabled is a no-op.
TEST(ScalerWithBFloat16, ALossFromTheRegionJustClosed) {
  const ObjectRef scaler{1, "'scaler'"};
  const AutocastState off;
  std::vector<Finding> out;
  BFloat16LossSource source;
  source.regionLeft(autocastOn(ScalarType::BFloat16, std::nullopt));
  source.scaled(scaler, /*mayBeDisabled=*/false, at(7), off, out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL209"});
  EXPECT_EQ(out[0].location.line, 7u);
  EXPECT_EQ(out[0].notes.at(0).location.line, 5u);
  source.scaled(scaler, false, at(8), off, out);
  EXPECT_EQ(out.size(), 1u);

  source.regionLeft(autocastOn(ScalarType::BFloat16, std::nullopt));
  source.join(BFloat16LossSource{});
  source.scaled(scaler, false, at(9), off, out);
  EXPECT_EQ(out.size(), 1u);

  source.regionLeft(autocastOn(ScalarType::BFloat16, std::nullopt));
  source.scaled(scaler, /*mayBeDisabled=*/true, at(10), off, out);
  EXPECT_EQ(out.size(), 1u);
  source.scaled(scaler, false, at(11), autocastOn(ScalarType::BFloat16, std::nullopt), out);
  EXPECT_EQ(out.size(), 2u);
}

// After an iteration on Half parameters (DL202), the same optimizer's parameters are BFloat16.
TEST_F(Protocol, BFloat16ParametersAreDL209) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::Half), Note{at(9), "became Half here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  out.clear();  // DL202: Protocol.HalfParametersAreDL202
  p.update(kScaler, at(3), out);
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), std::nullopt, 0);
  p.unscale(kScaler, kOpt, at(4), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL209"});
}

// DL209 names the backward of the loss the scaler scaled (where the scaler
// was put to use), once for its gradients, with the unscale as a note.
TEST_F(Protocol, BFloat16ParametersAreReportedOnceAtTheScaledBackward) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), Note{at(9), "became BFloat16 here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOpt, at(3), out);
  ASSERT_EQ(rules(out), (std::vector<std::string>{"DL209", "DL206"}));
  EXPECT_EQ(out[0].location.line, 1u);
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[1].location.line, 2u);
  EXPECT_EQ(out[0].notes[1].message, "its gradients unscaled here");
}

}  // namespace
}  // namespace dtype_lint
