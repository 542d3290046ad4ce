// DL304 fp16-optimizer-epsilon: Adam on Half parameters with the default
// eps=1e-8, which is 0 in Half (smallest subnormal 5.96e-8).
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  auto model = torch::nn::Sequential(torch::nn::Linear(16, 16), torch::nn::Tanh(), torch::nn::Linear(16, 1));
  model->to(torch::kHalf);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));  // dtype-lint-expect: DL304
  std::cout << "optimizer over " << model->parameters().size() << " Half tensors\n";
  return 0;
}
