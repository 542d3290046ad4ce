#include "lm_trainer.h"
#include "lora.h"

int main() {
  lm::Trainer trainer(lm::TrainConfig{});
  trainer.fit();
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
