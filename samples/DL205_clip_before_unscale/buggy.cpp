// DL205 clip-before-unscale: the gradients are clipped while they still hold
// loss * scale; with a scale of 65536 the clip to norm 1.0 throws away the
// gradient's magnitude (or, with a loose threshold, does nothing).
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    scaler.scale(loss).backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);  // dtype-lint-expect: DL205
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
