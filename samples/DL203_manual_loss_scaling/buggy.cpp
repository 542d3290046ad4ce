// DL203 manual-loss-scaling: a hand-rolled static loss scale. No inf/NaN
// check skips a bad step, and the scale never adapts.
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  const float loss_scale = 1024.0f;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    auto scaled_loss = loss * loss_scale;
    scaled_loss.backward();  // dtype-lint-expect: DL203
    for (auto& param : model->parameters()) param.mutable_grad().div_(loss_scale);
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  // The same in one line.
  (torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1})) * 65536).backward();  // dtype-lint-expect: DL203
  return 0;
}
