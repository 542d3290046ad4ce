#include <cstdlib>
#include <iostream>
#include <string>

#include "lm_trainer.h"
#include "lora.h"

// The helper in grad_utils.cpp unscales the Half optimizer (DL202 there);
// the logging unscale here is the second (DL201), not another DL202.
void logGradNorms(const char* precision, int logEvery) {
  const torch::Dtype dtype = precision && std::string(precision) == "fp16" ? torch::kHalf : torch::kFloat;
  torch::nn::Sequential model(torch::nn::Linear(16, 4));
  model->to(dtype);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    scaler.scale(model->forward(torch::randn({8, 16}).to(dtype)).to(torch::kFloat).sum()).backward();
    const double norm = lm::unscale_and_clip(scaler, optimizer, model->parameters(), 1.0);
    if (logEvery > 0 && step % logEvery == 0) {
      scaler.unscale_(optimizer);  // dtype-lint-expect: DL201 {{gradients of 'optimizer' unscaled again}}
      std::cout << norm << "\n";
    }
    scaler.step(optimizer);
    scaler.update();
  }
}

int main() {
  lm::Trainer trainer(lm::TrainConfig{});
  trainer.fit();
  logGradNorms(std::getenv("PRECISION"), 10);
  lm::Evaluator evaluator;
  evaluator.tune(torch::randn({8, 16}));
  // A BFloat16 batch from model.cpp's helper meets a Float layer.
  torch::nn::Linear probe(16, 4);
  auto batch = lm::to_compute_dtype(torch::randn({8, 16}));
  auto scores = probe(batch);  // dtype-lint-expect: DL101:17 {{'linear' on operands of different dtypes outside autocast (input 'batch': BFloat16, the parameters of 'probe': Float)}}
  // The adapter's weight is BFloat16 like its input; its backward is not.
  lm::LoraLinear adapter(16, 4, 2);
  adapter->weight = adapter->weight.to(torch::kBFloat16);
  adapter(batch).to(torch::kFloat).sum().backward();
  return scores.defined() ? 0 : 1;
}
