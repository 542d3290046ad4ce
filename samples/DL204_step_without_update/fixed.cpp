// DL204 fixed: update() after every step; logging is separate.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  const int log_every = 2;
  for (int step = 0; step < 6; ++step) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
    if (step % log_every != 0) continue;
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
