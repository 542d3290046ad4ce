// A trainer spread over files as projects lay it out: the model is built in
// model.cpp, gradients are clipped by a helper in grad_utils.cpp, the loop
// lives in trainer.cpp and main.cpp drives it. Each bug's cause and its
// effect sit in different translation units.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "../common/grad_scaler.h"

namespace lm {

struct TrainConfig {
  double lr = 1e-2;
  double max_norm = 1.0;
  int steps = 3;
};

// model.cpp
torch::nn::Sequential build_half_model(int64_t in, int64_t out);
torch::nn::Sequential build_float_model(int64_t in, int64_t out);
torch::Tensor to_compute_dtype(const torch::Tensor& x);
// grad_utils.cpp
void clip_all(torch::nn::Sequential& model, double max_norm);
double unscale_and_clip(GradScaler& scaler, torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params,
                        double max_norm);

class Trainer {
 public:
  explicit Trainer(const TrainConfig& cfg);
  void fit();

 private:
  void train_step(const torch::Tensor& x, const torch::Tensor& y);
  TrainConfig cfg_;
  torch::nn::Sequential model_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  GradScaler scaler_;
};

// Float model, Float optimizer: unscaled once, then clipped (clean).
class Evaluator {
 public:
  Evaluator();
  void tune(const torch::Tensor& x);

 private:
  torch::nn::Sequential head_{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer_;
  GradScaler scaler_;
};

}  // namespace lm
