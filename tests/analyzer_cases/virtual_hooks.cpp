// A template-method trainer: the base's fit_step() scales the loss and calls
// virtual hooks a derived trainer overrides. Called on an object of the
// derived class, the hooks run its overrides, and their findings stay in
// them; analyzed alone, the base's update() after a pure virtual step hook
// is no update() without a step.
#include <torch/torch.h>

#include "../../samples/common/grad_scaler.h"

class BaseTrainer {
 public:
  virtual ~BaseTrainer() = default;
  float fit_step(const torch::Tensor& x) {
    torch::Tensor loss = compute_loss(x);
    scaler_.scale(loss).backward();
    on_after_backward();
    step_optimizers();
    scaler_.update();
    return loss.item<float>();
  }

 protected:
  virtual torch::Tensor compute_loss(const torch::Tensor& x) = 0;
  virtual void on_after_backward() {}
  virtual void step_optimizers() = 0;
  GradScaler scaler_;
};

class ClippingTrainer : public BaseTrainer {
 public:
  ClippingTrainer() : model_(8, 1), opt_(model_->parameters(), 0.1) {}

 protected:
  torch::Tensor compute_loss(const torch::Tensor& x) override { return model_(x).pow(2).mean(); }
  void on_after_backward() override {
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);  // dtype-lint-expect: DL205 {{gradients clipped while they hold the scaled loss's gradients}}
  }
  void step_optimizers() override { scaler_.step(opt_); }
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
};

class UnscalingTrainer : public BaseTrainer {
 public:
  UnscalingTrainer() : model_(8, 1), opt_(model_->parameters(), 0.1) {}

 protected:
  torch::Tensor compute_loss(const torch::Tensor& x) override { return model_(x).pow(2).mean(); }
  void on_after_backward() override {
    scaler_.unscale_(opt_);
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
  }
  void step_optimizers() override { scaler_.step(opt_); }
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
};

void train_both() {
  ClippingTrainer clipping;
  UnscalingTrainer unscaling;
  for (int i = 0; i < 3; ++i) {
    clipping.fit_step(torch::randn({4, 8}));
    unscaling.fit_step(torch::randn({4, 8}));
  }
}
