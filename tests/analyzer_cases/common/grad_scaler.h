// The smallest GradScaler a C++ training program writes: the analyzer knows it
// by its class and method names (the default scaler API).
#pragma once

#include <torch/torch.h>

class GradScaler {
 public:
  torch::Tensor scale(const torch::Tensor& loss) { return loss * 65536.0; }
  void unscale_(torch::optim::Optimizer& optimizer) {
    for (auto& group : optimizer.param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) p.mutable_grad().mul_(1.0 / 65536.0);
  }
  void step(torch::optim::Optimizer& optimizer) { optimizer.step(); }
  void update() {}
};
