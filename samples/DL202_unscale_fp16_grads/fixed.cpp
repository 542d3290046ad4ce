// DL202 fixed: Float master parameters; the scaler unscales Float gradients.
#include <torch/torch.h>

#include <iostream>

#include "../common/grad_scaler.h"

struct AffineImpl : torch::nn::Module {
  explicit AffineImpl(int64_t features)
      : weight(register_parameter("weight", torch::ones({features}))),
        bias(register_parameter("bias", torch::zeros({features}))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x * weight + bias; }
  torch::Tensor weight, bias;
};
TORCH_MODULE(Affine);

int main() {
  torch::manual_seed(0);
  Affine model(16);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  GradScaler scaler;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto prediction = model(torch::randn({8, 16}));
    auto loss = prediction.pow(2).mean();
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
