// DL305 fixed: the CPU's autocast is turned on, so the matmuls run in BFloat16.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

struct Regressor : torch::nn::Module {
  Regressor() {
    fc1 = register_module("fc1", torch::nn::Linear(64, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 1));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

void train(Regressor& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::optim::SGD optimizer(model.parameters(), 0.05);
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto loss = torch::mse_loss(model.forward(x), y);
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
}

int main() {
  torch::manual_seed(0);
  Regressor model;
  auto x = torch::randn({128, 64});
  auto y = torch::randn({128, 1});
  train(model, x, y);
  return 0;
}
