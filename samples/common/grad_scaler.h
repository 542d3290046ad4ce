// A hand-written gradient scaler of the shape C++ training code carries
// (LibTorch has no GradScaler): scale the loss, unscale the gradients of an
// optimizer once, skip the step when they are not finite, adapt the scale.
// It announces its transitions (dtype_lint/annotate.h) for the runtime hooks.
#pragma once

#include <torch/torch.h>

#include <map>

#include "dtype_lint/annotate.h"

class GradScaler {
 public:
  explicit GradScaler(double init_scale = 65536.0) : scale_(init_scale) {}

  torch::Tensor scale(const torch::Tensor& loss) {
    auto scaled = loss * scale_;
    dtype_lint::annotate::scale(this, scaled);
    return scaled;
  }

  void unscale_(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::unscale(this, &optimizer);
    unscale_gradients(optimizer);
  }

  // Unscales implicitly unless unscale_() already did.
  void step(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::step(this, &optimizer);
    if (!found_inf_.count(&optimizer)) unscale_gradients(optimizer);
    if (!found_inf_[&optimizer]) optimizer.step();
  }

  void update() {
    dtype_lint::annotate::update(this);
    bool any_inf = false;
    for (const auto& [optimizer, found_inf] : found_inf_) any_inf = any_inf || found_inf;
    scale_ = any_inf ? scale_ * 0.5 : (++good_steps_ % 2000 == 0 ? scale_ * 2.0 : scale_);
    if (any_inf) good_steps_ = 0;
    found_inf_.clear();
  }

  double get_scale() const { return scale_; }

 private:
  void unscale_gradients(torch::optim::Optimizer& optimizer) {
    bool found_inf = false;
    for (auto& group : optimizer.param_groups())
      for (auto& param : group.params()) {
        if (!param.grad().defined()) continue;
        param.mutable_grad().mul_(1.0 / scale_);
        found_inf = found_inf || !torch::isfinite(param.grad()).all().item<bool>();
      }
    found_inf_[&optimizer] = found_inf;
  }

  double scale_;
  int64_t good_steps_ = 0;
  std::map<torch::optim::Optimizer*, bool> found_inf_;
};
