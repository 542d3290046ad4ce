// A scaler that announces itself (dtype_lint/annotate.h) and is built on the
// raw AMP ops: its announcements are what the hooks follow, so the ops inside
// it add no second finding at another line.
#include <iostream>
#include <vector>

#include "amp_cpu_kernels.h"
#include "dtype_lint/annotate.h"

class GradScaler {
 public:
  torch::Tensor scale(const torch::Tensor& loss) {
    auto scaled = loss * scale_;
    dtype_lint::annotate::scale(this, scaled);
    return scaled;
  }
  void unscale_(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::unscale(this, &optimizer);
    unscaleGradients(optimizer);
  }
  void step(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::step(this, &optimizer);
    if (!unscaled_) unscaleGradients(optimizer);
    if (foundInf_.item<float>() == 0) optimizer.step();
  }
  void update() {
    dtype_lint::annotate::update(this);
    at::_amp_update_scale_(scale_, growthTracker_, foundInf_, 2.0, 0.5, 2000);
    foundInf_.zero_();
    unscaled_ = false;
  }

 private:
  void unscaleGradients(torch::optim::Optimizer& optimizer) {
    std::vector<torch::Tensor> grads;
    for (const auto& group : optimizer.param_groups())
      for (const auto& parameter : group.params())
        if (parameter.grad().defined()) grads.push_back(parameter.grad());
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf_, scale_.reciprocal());
    unscaled_ = true;
  }

  torch::Tensor scale_ = torch::full({1}, 1024.0);
  torch::Tensor growthTracker_ = torch::zeros({1}, torch::kInt);
  torch::Tensor foundInf_ = torch::zeros({1});
  bool unscaled_ = false;
};

int main() {
  amp_cpu_kernels::registerCpuKernelsIfMissing();
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    scaler.scale(model(torch::randn({8, 16})).pow(2).mean()).backward();
    scaler.step(optimizer);
    scaler.unscale_(optimizer);  // dtype-lint-expect: DL206
    std::cout << "grad norm " << model->weight.grad().norm().item<double>() << "\n";
    scaler.update();
  }
  return 0;
}
