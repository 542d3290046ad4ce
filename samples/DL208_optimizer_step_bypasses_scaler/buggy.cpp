// DL208 optimizer-step-bypasses-scaler: the loss is scaled, but the optimizer
// steps directly, with gradients 65536x too large and no inf/NaN check.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  auto optimizer = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-3));
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer->zero_grad();
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    scaler.scale(loss).backward();
    optimizer->step();  // dtype-lint-expect: DL208
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
