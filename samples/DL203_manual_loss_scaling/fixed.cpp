// DL203 fixed: a GradScaler scales, checks for inf/NaN and adapts; a loss
// weight stays a plain multiplication.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler(1024.0);
  const float aux_weight = 0.5f;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto prediction = model(torch::randn({8, 16}));
    auto loss = torch::mse_loss(prediction, torch::zeros({8, 1})) + prediction.abs().mean() * aux_weight;
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
