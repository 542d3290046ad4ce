#include "lm_trainer.h"

namespace lm {

Trainer::Trainer(const TrainConfig& cfg) : cfg_(cfg) {
  model_ = build_half_model(16, 4);
  optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(cfg_.lr));
}

void Trainer::fit() {
  for (int step = 0; step < cfg_.steps; ++step)
    train_step(torch::randn({8, 16}, torch::kHalf), torch::randn({8, 4}));
}

void Trainer::train_step(const torch::Tensor& x, const torch::Tensor& y) {
  optimizer_->zero_grad();
  auto loss = torch::mse_loss(model_->forward(x).to(torch::kFloat), y);
  scaler_.scale(loss).backward();
  clip_all(model_, cfg_.max_norm);  // dtype-lint-expect: DL205:3 {{gradients clipped while they hold the scaled loss's gradients}}
  scaler_.step(*optimizer_);  // dtype-lint-expect: DL202:3 {{'scaler_' unscales the gradients of 'optimizer_', whose parameters are Half}}
  scaler_.update();
}

Evaluator::Evaluator() : head_(build_float_model(16, 4)) {
  optimizer_ = std::make_unique<torch::optim::SGD>(head_->parameters(), torch::optim::SGDOptions(0.1));
}

void Evaluator::tune(const torch::Tensor& x) {
  optimizer_->zero_grad();
  auto loss = head_->forward(x).pow(2).mean();
  scaler_.scale(loss).backward();
  scaler_.unscale_(*optimizer_);
  torch::nn::utils::clip_grad_norm_(head_->parameters(), 1.0);
  scaler_.step(*optimizer_);
  scaler_.update();
}

}  // namespace lm
