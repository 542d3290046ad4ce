// DL210 fixed: the end-of-epoch hook only reads the scale.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

void end_of_epoch(const GradScaler& scaler, int epoch) {
  std::cout << "epoch " << epoch << " scale " << scaler.get_scale() << "\n";
}

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int step = 0; step < 3; ++step) {
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
      scaler.scale(loss).backward();
      scaler.step(optimizer);
      scaler.update();
    }
    end_of_epoch(scaler, epoch);
  }
  return 0;
}
