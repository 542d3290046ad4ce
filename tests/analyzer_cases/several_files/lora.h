// A LoRA adapter whose custom Function and module are defined in lora.cpp and
// used from main.cpp through the module holder: LibTorch's templates make
// the calls, and its backward writes BFloat16 products into Float buffers.
#pragma once

#include <torch/torch.h>

namespace lm {

struct LoraMatmul : torch::autograd::Function<LoraMatmul> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, torch::Tensor weight,
                               torch::Tensor lora_a);
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs);
};

struct LoraLinearImpl : torch::nn::Module {
  LoraLinearImpl(int64_t in, int64_t out, int64_t rank);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, lora_a;
};
TORCH_MODULE(LoraLinear);

}  // namespace lm
