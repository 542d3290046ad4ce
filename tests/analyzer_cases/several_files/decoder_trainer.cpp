#include <ATen/autocast_mode.h>

#include "decoder.h"

// Called with the driver's Float model, the projection raises: its hidden
// input is Half. Analyzed alone, with the model unknown, the projection
// would hand Half logits to the loss and its backward; the driver's context
// stands instead.
double DecoderTrainer::step(const torch::Tensor& x, const torch::Tensor& target) {
  at::autocast::set_enabled(true);
  auto hidden = model_->body(x);
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  auto logits = model_->out_proj(hidden);  // dtype-lint-expect: DL101 {{input 'hidden': Half, the parameters of 'model_->out_proj': Float}}
  auto loss = torch::nn::functional::cross_entropy(logits, target);
  loss.backward();
  return loss.item<double>();
}
