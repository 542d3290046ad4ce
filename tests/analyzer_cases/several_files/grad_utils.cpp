#include "lm_trainer.h"

namespace lm {

void clip_all(torch::nn::Sequential& model, double max_norm) {
  torch::nn::utils::clip_grad_norm_(model->parameters(), max_norm);
}

// Unscales, then clips: what a second unscale in the caller repeats.
double unscale_and_clip(GradScaler& scaler, torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params,
                        double max_norm) {
  scaler.unscale_(optimizer);  // dtype-lint-expect: DL202 {{'scaler' unscales the gradients of 'optimizer', whose parameters are Half}}
  return torch::nn::utils::clip_grad_norm_(params, max_norm);
}

}  // namespace lm
