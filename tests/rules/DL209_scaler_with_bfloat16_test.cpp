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
}

// The flow fact: scale() right after a BFloat16 region closed scales its
// loss; a second scale() with no region between scales another loss; a path
// where no region closed (a join) has none.
TEST(ScalerWithBFloat16, ALossFromTheRegionJustClosed) {
  const AutocastState off;
  BFloat16LossSource source;
  source.regionLeft(autocastOn(ScalarType::BFloat16, std::nullopt));
  const auto region = source.scaled(off);
  ASSERT_TRUE(region);
  EXPECT_EQ(region->line, 5u);
  EXPECT_FALSE(source.scaled(off));

  source.regionLeft(autocastOn(ScalarType::BFloat16, std::nullopt));
  source.join(BFloat16LossSource{});
  EXPECT_FALSE(source.scaled(off));
  EXPECT_TRUE(source.scaled(autocastOn(ScalarType::BFloat16, std::nullopt)));
  EXPECT_FALSE(source.scaled(autocastOn(ScalarType::BFloat16, ScalarType::Half)));
}

// Reported at the scale() once its gradients are stepped with, with the step()
// and the region as notes; once.
TEST_F(Protocol, ALossScaledUnderBFloat16IsReportedAtItsScale) {
  p.scaledUnderBFloat16(kScaler, at(2), at(1));
  p.scaledBackward(kScaler, at(2));
  p.step(kScaler, kOpt, at(3), out);
  p.update(kScaler, at(4), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL209"});
  EXPECT_EQ(out[0].location.line, 2u);
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[0].message, "the scaler unscales and steps with its gradients here");
  EXPECT_EQ(out[0].notes[0].location.line, 3u);
  EXPECT_EQ(out[0].notes[1].location.line, 1u);
  EXPECT_NE(out[0].message.find("BFloat16 autocast"), std::string::npos) << out[0].message;
  EXPECT_EQ(out[0].severity, Severity::Note);  // overhead only
}

// update() before any unscale: the scaler did no work on those gradients.
TEST_F(Protocol, ALossScaledUnderBFloat16ButNeverUnscaledIsNotReported) {
  p.scaledUnderBFloat16(kScaler, at(2), at(1));
  p.update(kScaler, at(4), out);
  p.unscaleUnidentifiedOptimizer(kScaler, at(5), out);
  EXPECT_EQ(rules(out), std::vector<std::string>{"DL210"});
}

// `GradScaler(enabled=use_fp16)`: a no-op where the loss is BFloat16.
TEST_F(Protocol, AScalerThatMayBeDisabledIsNotReported) {
  p.declareScaler(kScaler, /*mayBeDisabled=*/true);
  p.scaledUnderBFloat16(kScaler, at(2), at(1));
  p.unscaleUnidentifiedOptimizer(kScaler, at(3), out);
  EXPECT_TRUE(out.empty());
}

// After an iteration on Half parameters (DL202), the same optimizer's parameters are BFloat16.
TEST_F(Protocol, BFloat16ParametersAreDL209) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::Half), Note{at(9), "became Half here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  out.clear();  // DL202: Protocol.HalfParametersAreDL202
  p.update(kScaler, at(3), out);
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), std::nullopt, 0);
  p.scaledBackward(kScaler, at(4));
  p.unscale(kScaler, kOpt, at(5), out);
  EXPECT_TRUE(out.empty());  // once the gradients are used, by the step(): reported at their scale()
  p.step(kScaler, kOpt, at(6), out);
  ASSERT_EQ(rules(out), std::vector<std::string>{"DL209"});
  EXPECT_EQ(out[0].location.line, 4u);
  EXPECT_EQ(out[0].severity, Severity::Warning);  // CUDA's unscale kernel raises
  EXPECT_EQ(out[0].notes.back().message, "gradients unscaled here");
  EXPECT_EQ(out[0].notes.back().location.line, 5u);
}

// DL209 at the scale() of the loss, as the BFloat16-autocast form, once for
// its gradients, with the step() that uses them as a note.
TEST_F(Protocol, BFloat16ParametersAreReportedOnceAtTheirScale) {
  p.declareOptimizer(kOpt, DtypeSet(ScalarType::BFloat16), Note{at(9), "became BFloat16 here"}, 0);
  p.scaledBackward(kScaler, at(1));
  p.step(kScaler, kOpt, at(2), out);
  p.unscale(kScaler, kOpt, at(3), out);
  ASSERT_EQ(rules(out), (std::vector<std::string>{"DL209", "DL206"}));
  EXPECT_EQ(out[0].location.line, 1u);
  ASSERT_EQ(out[0].notes.size(), 2u);
  EXPECT_EQ(out[0].notes[1].location.line, 2u);
  EXPECT_EQ(out[0].notes[1].message, "the scaler unscales and steps with its gradients here");
}

}  // namespace
}  // namespace dtype_lint
