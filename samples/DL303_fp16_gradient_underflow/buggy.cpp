// DL303 fp16-gradient-underflow: a per-feature calibration (gain and bias)
// trained entirely in Half with no loss scaling. The calibration is nearly
// right (errors around 1e-3) and the loss is a mean over 64K values, so each
// gradient value is around 1e-5: subnormal in Half, where it keeps a few bits
// or flushes to zero, and the calibration barely moves.
#include <torch/torch.h>

#include <iostream>

struct Calibration : torch::nn::Module {
  explicit Calibration(int64_t features)
      : gain(register_parameter("gain", torch::ones({features}))),
        bias(register_parameter("bias", torch::zeros({features}))) {}

  torch::Tensor forward(const torch::Tensor& x) { return x * gain + bias; }

  torch::Tensor gain, bias;
};

int main() {
  torch::manual_seed(0);
  auto calibration = std::make_shared<Calibration>(256);
  calibration->to(torch::kHalf);
  torch::optim::SGD optimizer(calibration->parameters(), 0.1);
  auto inputs = torch::randn({256, 256}).to(torch::kHalf);
  auto targets = (inputs * 1.001 + 0.001).to(torch::kFloat);

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto error = calibration->forward(inputs).to(torch::kFloat) - targets;
    auto loss = error.pow(2).mean();
    loss.backward();
    optimizer.step();  // dtype-lint-expect: DL303
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
