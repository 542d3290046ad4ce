// DL201 fixed: accumulate scaled gradients, unscale once per optimizer step.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  const int accumulation = 4;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    for (int micro = 0; micro < accumulation; ++micro) {
      auto x = torch::randn({8, 16});
      auto loss = torch::mse_loss(model(x), torch::zeros({8, 1})) / accumulation;
      scaler.scale(loss).backward();
    }
    scaler.unscale_(optimizer);
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " scale " << scaler.get_scale() << "\n";
  }
  return 0;
}
