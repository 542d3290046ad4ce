// DL107 autocast-cache-not-cleared: autocast caches the BFloat16 copy of each
// Float weight it casts. Here it is switched on once for the whole loop: every
// forward after the first computes with the weights of step 0. Nothing raises.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

struct Regressor : torch::nn::Module {
  Regressor() {
    fc1 = register_module("fc1", torch::nn::Linear(8, 32));
    fc2 = register_module("fc2", torch::nn::Linear(32, 1));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

void train_region_left_open(Regressor& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::optim::SGD optimizer(model.parameters(), 0.05);
  at::autocast::set_cpu_enabled(true);
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model.forward(x), y);
    loss.backward();
    optimizer.step();  // dtype-lint-expect: DL107
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

void train_region_closed_without_clearing(Regressor& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::optim::SGD optimizer(model.parameters(), 0.05);
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto prediction = model.forward(x);
    at::autocast::set_cpu_enabled(false);  // dtype-lint-expect: DL107
    auto loss = torch::mse_loss(prediction.to(torch::kFloat), y);
    loss.backward();
    optimizer.step();
  }
}

int main() {
  torch::manual_seed(0);
  Regressor model;
  auto x = torch::randn({64, 8});
  auto y = torch::randn({64, 1});
  train_region_left_open(model, x, y);
  train_region_closed_without_clearing(model, x, y);
  return 0;
}
