// DL209 fixed: BFloat16 autocast without a loss scaler.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
