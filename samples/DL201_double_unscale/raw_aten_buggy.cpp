// DL201 with the raw ATen AMP ops, as C++ ports of GradScaler call them:
// _amp_foreach_non_finite_check_and_unscale_ unscales the gradients of the
// optimizer whose parameters it is given; here once per micro-batch.
// (The fused kernels run on CUDA, and on CPU from LibTorch 2.3.)
#include <torch/torch.h>

#include <vector>

std::vector<torch::Tensor> gradients(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> grads;
  for (auto& group : optimizer.param_groups())
    for (auto& param : group.params())
      if (param.grad().defined()) grads.push_back(param.grad());
  return grads;
}

void train(torch::nn::Linear& model, torch::optim::SGD& optimizer, int micro_batches) {
  auto scale = torch::full({1}, 65536.0);
  auto growth_tracker = torch::zeros({1}, torch::kInt);
  auto found_inf = torch::zeros({1});
  for (int micro = 0; micro < micro_batches; ++micro) {
    auto loss = model(torch::randn({8, 16})).pow(2).mean();
    (loss * scale).backward();
    auto grads = gradients(optimizer);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale.reciprocal());  // dtype-lint-expect: DL201
  }
  if (found_inf.item<float>() == 0) optimizer.step();
  at::_amp_update_scale_(scale, growth_tracker, found_inf, 2.0, 0.5, 2000);
}

int main() {
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  train(model, optimizer, 4);
  return 0;
}
