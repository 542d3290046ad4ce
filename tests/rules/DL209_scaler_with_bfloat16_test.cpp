// DL209 scaler-with-bfloat16: when a scaler is pointless (LibTorch-free).
#include <gtest/gtest.h>

#include "dtype_lint/dl209_scaler_with_bfloat16.h"

namespace dtype_lint {
namespace {

SourceLocation at(unsigned line) { return SourceLocation{"train.cpp", line, 3, line, 10}; }

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

}  // namespace
}  // namespace dtype_lint
