// DL202 fixed: Float master parameters; the scaler unscales Float gradients.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  auto model = torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 1));
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto prediction = model->forward(torch::randn({8, 16}));
    auto loss = prediction.pow(2).mean();
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
