// DL107 rests on this: with autocast kept on (or left without clear_cache),
// a forward after an in-place parameter update computes with the cached
// low-precision copy of the OLD values. If a LibTorch release changes that,
// these tests fail and DL107 must be revisited.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

class AutocastCachePremise : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(0);
    at::autocast::set_cpu_enabled(true);
  }
  void TearDown() override {
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
};

TEST_F(AutocastCachePremise, MatmulWithALeafWeightUsesTheCachedOldWeight) {
  const auto x = torch::randn({2, 4});
  auto weight = torch::randn({4, 4}, torch::requires_grad());
  const auto before = torch::mm(x, weight);
  {
    torch::NoGradGuard no_grad;  // what optimizer.step() does
    weight.zero_();
  }
  const auto stale = torch::mm(x, weight);
  at::autocast::clear_cache();
  const auto fresh = torch::mm(x, weight);

  EXPECT_EQ(stale.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(stale, before)) << "the cached copy of the old weight was used";
  EXPECT_EQ(fresh.abs().max().item<float>(), 0.0f) << "clear_cache() makes the next forward see the update";
}

TEST_F(AutocastCachePremise, LinearModuleUsesItsCachedOldBias) {
  torch::nn::Linear fc(4, 4);
  const auto x = torch::randn({2, 4});
  const auto before = fc(x);
  {
    torch::NoGradGuard no_grad;
    fc->bias.zero_();
  }
  const auto stale = fc(x);
  at::autocast::clear_cache();
  const auto fresh = fc(x);

  EXPECT_TRUE(torch::equal(stale, before)) << "the cached copy of the old bias was used";
  EXPECT_FALSE(torch::equal(fresh, before)) << "clear_cache() makes the next forward see the update";
}

}  // namespace
