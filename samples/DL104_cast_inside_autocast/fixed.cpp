// DL104 fixed: autocast chooses the dtypes inside its region: BFloat16 for
// the linear layer, Float for mse_loss (a linear that must run in Float runs
// with autocast disabled around it).
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

struct Head : torch::nn::Module {
  Head() { fc = register_module("fc", torch::nn::Linear(32, 8)); }
  torch::nn::Linear fc{nullptr};
};

int main() {
  torch::manual_seed(0);
  auto head = std::make_shared<Head>();
  torch::optim::SGD optimizer(head->parameters(), 0.05);
  auto features = torch::randn({64, 32}).to(torch::kBFloat16);
  auto targets = torch::randn({64, 8});
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto prediction = head->fc(features);
    auto loss = torch::mse_loss(prediction, targets);
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
