// DL207 step-without-scaled-backward: a refactoring dropped scaler.scale()
// from the backward call; step() still divides the gradients by 65536.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

torch::Tensor compute_loss(torch::nn::Linear& model) {
  return torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
}

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = compute_loss(model);
    loss.backward();
    scaler.step(optimizer);  // dtype-lint-expect: DL207
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
