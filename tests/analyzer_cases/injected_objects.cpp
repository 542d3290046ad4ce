// Scalers held in a std::optional engaged for fp16 only, and optimizers built
// by the caller and moved into a trainer: the analysis follows which path
// holds a scaler, and does not judge gradients by an optimizer it lost track of.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "common/grad_scaler.h"

enum class Amp { kOff, kFp16, kBf16 };

Amp amp_from(const std::string& s) {
  if (s == "fp16") return Amp::kFp16;
  if (s == "bf16") return Amp::kBf16;
  return Amp::kOff;
}

at::ScalarType autocast_dtype(Amp amp) { return amp == Amp::kBf16 ? at::kBFloat16 : at::kHalf; }

// Scoped CUDA autocast.
class AutocastScope {
 public:
  AutocastScope(bool enabled, at::ScalarType dtype) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  }
  ~AutocastScope() {
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
  }
};

// The scaler exists for fp16 only: bf16 runs never scale.
void scaler_only_for_fp16(Amp amp) {
  torch::nn::Linear model(16, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  std::optional<GradScaler> scaler;
  if (amp == Amp::kFp16) scaler.emplace();
  for (int it = 0; it < 4; ++it) {
    sgd.zero_grad();
    torch::Tensor loss;
    {
      AutocastScope scope(amp != Amp::kOff, autocast_dtype(amp));
      loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    }
    if (scaler) {
      scaler->scale(loss).backward();
      scaler->step(sgd);
      scaler->update();
    } else {
      loss.backward();
      sgd.step();
    }
  }
}

// An optimizer made by the caller and moved into the trainer.
class Trainer {
 public:
  Trainer(torch::nn::Linear model, std::unique_ptr<torch::optim::Optimizer> optimizer)
      : model_(std::move(model)), optimizer_(std::move(optimizer)) {}
  void epoch() {
    for (int it = 0; it < 4; ++it) {
      optimizer_->zero_grad();
      scaler_.scale(model_(torch::randn({8, 16})).pow(2).mean()).backward();
      scaler_.unscale_(*optimizer_);
      torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
      scaler_.step(*optimizer_);
      scaler_.update();
    }
  }

 private:
  torch::nn::Linear model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  GradScaler scaler_;
};

int main() {
  const char* setting = std::getenv("AMP_DTYPE");
  const Amp amp = amp_from(setting ? setting : "off");
  scaler_only_for_fp16(amp);
  torch::nn::Linear model(16, 1);
  auto optimizer = std::make_unique<torch::optim::SGD>(model->parameters(), 0.1);
  Trainer trainer(model, std::move(optimizer));
  trainer.epoch();
}
