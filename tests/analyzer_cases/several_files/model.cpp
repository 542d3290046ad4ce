#include "lm_trainer.h"

namespace lm {

torch::nn::Sequential build_half_model(int64_t in, int64_t out) {
  torch::nn::Sequential model(torch::nn::Linear(in, 32), torch::nn::ReLU(), torch::nn::Linear(32, out));
  model->to(torch::kHalf);
  return model;
}

torch::nn::Sequential build_float_model(int64_t in, int64_t out) {
  return torch::nn::Sequential(torch::nn::Linear(in, out));
}

torch::Tensor to_compute_dtype(const torch::Tensor& x) { return x.to(torch::kBFloat16); }

}  // namespace lm
