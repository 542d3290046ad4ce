// The raw ATen AMP ops as C++ ports of GradScaler call them, on CPU: DL201,
// DL202, DL206, DL207 and DL210 under the hooks (on a LibTorch without CPU
// kernels for these ops, amp_cpu_kernels.h provides them).
#include <iostream>
#include <vector>

#include "amp_cpu_kernels.h"

namespace {

std::vector<torch::Tensor> gradientsOf(const torch::nn::Module& model) {
  std::vector<torch::Tensor> grads;
  for (const auto& parameter : model.parameters()) grads.push_back(parameter.grad());
  return grads;
}

}  // namespace

int main() {
  amp_cpu_kernels::registerCpuKernelsIfMissing();
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto scale = torch::full({1}, 1024.0);
  auto growthTracker = torch::zeros({1}, torch::kInt);
  auto loss_of = [&] { return model(torch::randn({8, 16})).pow(2).mean(); };

  // Gradient accumulation that unscales after every micro-batch: the second
  // unscale divides the first micro-batch's gradients by the scale again.
  for (int step = 0; step < 2; ++step) {
    auto foundInf = torch::zeros({1});
    optimizer.zero_grad();
    for (int micro = 0; micro < 2; ++micro) {
      (loss_of() * scale).backward();
      auto grads = gradientsOf(*model);
      at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());  // dtype-lint-expect: DL201
    }
    if (foundInf.item<float>() == 0) optimizer.step();
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
  }

  // The same accumulation, unscaled once per step: clean.
  for (int step = 0; step < 3; ++step) {
    auto foundInf = torch::zeros({1});
    optimizer.zero_grad();
    for (int micro = 0; micro < 2; ++micro) (loss_of() * scale).backward();
    auto grads = gradientsOf(*model);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
    if (foundInf.item<float>() == 0) optimizer.step();
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
  }

  // The scale updated twice in one step: the second update has no inf check of
  // its own, so it grows or backs off on a stale found_inf.
  {
    auto foundInf = torch::zeros({1});
    optimizer.zero_grad();
    (loss_of() * scale).backward();
    auto grads = gradientsOf(*model);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
    if (foundInf.item<float>() == 0) optimizer.step();
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);  // dtype-lint-expect: DL210
  }

  // Unscaled again after the step, to log the gradient norm: the step has
  // used these gradients, which are now divided by the scale a second time.
  for (int step = 0; step < 2; ++step) {
    auto foundInf = torch::zeros({1});
    optimizer.zero_grad();
    (loss_of() * scale).backward();
    auto grads = gradientsOf(*model);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
    if (foundInf.item<float>() == 0) optimizer.step();
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());  // dtype-lint-expect: DL206
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
  }

  // backward() on the loss itself, not on loss * scale: the unscale divides
  // the true gradients by the scale and the step barely moves the weights.
  for (int step = 0; step < 2; ++step) {
    auto foundInf = torch::zeros({1});
    optimizer.zero_grad();
    loss_of().backward();
    auto grads = gradientsOf(*model);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
    if (foundInf.item<float>() == 0) optimizer.step();  // dtype-lint-expect: DL207
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
  }

  // Clean look-alikes: the scale read as a number, the scaled loss divided for
  // accumulation, and an Adam step (its first update is of optimizer state).
  torch::optim::Adam adam(model->parameters(), 1e-3);
  for (int step = 0; step < 2; ++step) {
    auto foundInf = torch::zeros({1});
    adam.zero_grad();
    (loss_of() * scale.item<double>()).backward();
    (loss_of() * scale / 2).backward();
    auto grads = gradientsOf(*model);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
    if (foundInf.item<float>() == 0) adam.step();
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);
  }

  // Half parameters trained through the scale: their gradients are Half.
  auto weight = torch::randn({16}, torch::kHalf).requires_grad_();
  auto input = torch::randn({16}, torch::kHalf);
  ((weight * input).to(torch::kFloat).sum() * scale).backward();
  auto foundInf = torch::zeros({1});
  std::vector<torch::Tensor> halfGrads{weight.grad()};
  at::_amp_foreach_non_finite_check_and_unscale_(halfGrads, foundInf, scale.reciprocal());  // dtype-lint-expect: DL202
  at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, 2000);

  std::cout << "scale " << scale.item<double>() << "\n";
  return 0;
}
