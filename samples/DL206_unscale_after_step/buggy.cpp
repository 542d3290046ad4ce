// DL206 unscale-after-step: the gradient norm is logged after step(), and
// unscale_() is called to make it readable. PyTorch raises
// "unscale_() is being called after step()."; this C++ port divides again.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

double grad_norm(torch::nn::Linear& model) {
  double total = 0;
  for (auto& p : model->parameters()) total += p.grad().norm().item<double>();
  return total;
}

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.unscale_(optimizer);  // dtype-lint-expect: DL206
    std::cout << "step " << step << " grad norm " << grad_norm(model) << "\n";
    scaler.update();
  }
  return 0;
}
