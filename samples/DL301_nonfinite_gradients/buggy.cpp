// DL301 nonfinite-gradients: hidden features are normalized by their RMS
// with no epsilon. The batch's padding rows are all zeros, so 0/0 puts NaN in
// the forward and in every gradient, and the optimizer writes them into the
// weights (no scaler skips the step).
#include <torch/torch.h>

#include <iostream>

struct RmsClassifier : torch::nn::Module {
  RmsClassifier()
      : proj(register_module("proj", torch::nn::Linear(torch::nn::LinearOptions(32, 32).bias(false)))),
        head(register_module("head", torch::nn::Linear(32, 4))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = proj(x);
    auto rms = h.pow(2).mean(-1, /*keepdim=*/true).sqrt();
    return head(h / rms);
  }

  torch::nn::Linear proj, head;
};

int main() {
  torch::manual_seed(0);
  auto model = std::make_shared<RmsClassifier>();
  torch::optim::SGD optimizer(model->parameters(), 0.05);
  auto inputs = torch::randn({16, 32});
  inputs.slice(0, 12).zero_();  // padding rows of a ragged batch
  auto labels = torch::randint(0, 4, {16});

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(inputs), labels);
    loss.backward();
    optimizer.step();  // dtype-lint-expect: DL301
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
