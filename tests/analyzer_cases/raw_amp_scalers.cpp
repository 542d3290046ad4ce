// C++ ports of GradScaler built on the raw ATen AMP ops, under names the
// analyzer does not know (LossScaler): the ops inside their methods are the
// protocol's events, followed through the calls. An op repeated by the
// caller's loop is reported at the caller's call of the method.
#include <torch/torch.h>

#include <map>
#include <vector>

torch::Tensor loss_of(torch::nn::Linear& model) { return model(torch::randn({4, 8})).pow(2).mean(); }

std::vector<torch::Tensor> gradients_of(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> grads;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params())
      if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

// step() unscales only if the caller did not: its own bookkeeping guards it.
class LossScaler {
 public:
  torch::Tensor scale(const torch::Tensor& loss) { return loss * scale_; }
  void unscale_(torch::optim::Optimizer& optimizer) {
    auto grads = gradients_of(optimizer);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, scale_.reciprocal());
    unscaled_[&optimizer] = true;
  }
  void step(torch::optim::Optimizer& optimizer) {
    if (!unscaled_[&optimizer]) unscale_(optimizer);
    if (found_inf_.item<float>() == 0) optimizer.step();
  }
  void update() {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, 2000);
    found_inf_.zero_();
    unscaled_.clear();
  }

 private:
  torch::Tensor scale_ = torch::full({1}, 65536.0);
  torch::Tensor growth_tracker_ = torch::zeros({1}, torch::kInt);
  torch::Tensor found_inf_ = torch::zeros({1});
  std::map<torch::optim::Optimizer*, bool> unscaled_;
};

void unscale_clip_step_is_clean() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  LossScaler scaler;
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(opt);
    scaler.update();
  }
}

void unscale_per_micro_batch() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  LossScaler scaler;
  opt.zero_grad();
  for (int micro = 0; micro < 2; ++micro) {
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);  // dtype-lint-expect: DL201:5 {{gradients of 'opt' unscaled again before 'scaler'.update()}}
  }
  scaler.step(opt);
  scaler.update();
}

// The raw ops in the loop: an update after a skipped optimizer step still
// follows an inf check, so it is no double update.
void skipped_step_then_update_is_clean() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto scale = torch::full({1}, 65536.0);
  auto growth_tracker = torch::zeros({1}, torch::kInt);
  for (int i = 0; i < 3; ++i) {
    auto found_inf = torch::zeros({1});
    opt.zero_grad();
    (loss_of(model) * scale).backward();
    auto grads = gradients_of(opt);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale.reciprocal());
    if (found_inf.item<float>() == 0) opt.step();
    at::_amp_update_scale_(scale, growth_tracker, found_inf, 2.0, 0.5, 2000);
  }
}

// The overflow branch already backs the scale off; the unconditional update
// after it applies the same found_inf a second time on that path.
void overflow_branch_updates_then_updates_again() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto scale = torch::full({1}, 65536.0);
  auto growth_tracker = torch::zeros({1}, torch::kInt);
  auto found_inf = torch::zeros({1});
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    (loss_of(model) * scale).backward();
    auto grads = gradients_of(opt);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale.reciprocal());
    if (found_inf.item<float>() > 0) {
      at::_amp_update_scale_(scale, growth_tracker, found_inf, 2.0, 0.5, 2000);
    } else {
      opt.step();
    }
    at::_amp_update_scale_(scale, growth_tracker, found_inf, 2.0, 0.5, 2000);  // dtype-lint-expect: DL210 {{the same found_inf is applied again}}
    found_inf.zero_();
  }
}

// The same loop with one update per iteration, after either branch.
void overflow_branch_then_one_update_is_clean() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  auto scale = torch::full({1}, 65536.0);
  auto growth_tracker = torch::zeros({1}, torch::kInt);
  auto found_inf = torch::zeros({1});
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    (loss_of(model) * scale).backward();
    auto grads = gradients_of(opt);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale.reciprocal());
    if (found_inf.item<float>() == 0) opt.step();
    at::_amp_update_scale_(scale, growth_tracker, found_inf, 2.0, 0.5, 2000);
    found_inf.zero_();
  }
}
