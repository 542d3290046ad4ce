// A decoder whose trainer is defined in decoder_trainer.cpp and driven from
// decoder_driver.cpp: in its own file the trainer's model is whatever its
// constructor is given; only the driver's file says it is Float.
#pragma once

#include <torch/torch.h>

struct DecoderImpl : torch::nn::Module {
  DecoderImpl() {
    body = register_module("body", torch::nn::Linear(16, 16));
    out_proj = register_module("out_proj", torch::nn::Linear(16, 8));
  }
  torch::nn::Linear body{nullptr}, out_proj{nullptr};
};
TORCH_MODULE(Decoder);

class DecoderTrainer {
 public:
  explicit DecoderTrainer(Decoder model) : model_(std::move(model)) {}
  double step(const torch::Tensor& x, const torch::Tensor& target);

 private:
  Decoder model_;
};

void run_decoder();
