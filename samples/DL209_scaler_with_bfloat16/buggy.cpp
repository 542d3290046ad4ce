// DL209 scaler-with-bfloat16: a GradScaler kept from an fp16 recipe after
// switching autocast to BFloat16. It buys nothing here, and on CUDA the
// unscale kernel rejects BFloat16 gradients.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(16, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto loss = torch::mse_loss(model(torch::randn({8, 16})), torch::zeros({8, 1}));
    auto scaled = scaler.scale(loss);  // dtype-lint-expect: DL209
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    scaled.backward();
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
