// DL303 fixed: the calibration keeps Float parameters (its master copy); the
// inputs stay Half and are upcast where they meet the parameters, so the
// gradients are Float and keep their small values.
#include <torch/torch.h>

#include <iostream>

struct Calibration : torch::nn::Module {
  explicit Calibration(int64_t features)
      : gain(register_parameter("gain", torch::ones({features}))),
        bias(register_parameter("bias", torch::zeros({features}))) {}

  torch::Tensor forward(const torch::Tensor& x) { return x.to(torch::kFloat) * gain + bias; }

  torch::Tensor gain, bias;
};

int main() {
  torch::manual_seed(0);
  auto calibration = std::make_shared<Calibration>(256);
  torch::optim::SGD optimizer(calibration->parameters(), 0.1);
  auto inputs = torch::randn({256, 256}).to(torch::kHalf);
  auto targets = (inputs * 1.001 + 0.001).to(torch::kFloat);

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto error = calibration->forward(inputs) - targets;
    auto loss = error.pow(2).mean();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
