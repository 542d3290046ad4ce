#include "lm_trainer.h"

namespace lm {

void clip_all(torch::nn::Sequential& model, double max_norm) {
  torch::nn::utils::clip_grad_norm_(model->parameters(), max_norm);
}

}  // namespace lm
