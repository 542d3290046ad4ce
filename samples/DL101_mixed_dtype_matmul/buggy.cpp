// DL101 mixed-dtype-matmul: inputs are cast to BFloat16 "for speed" while the
// model keeps Float parameters, and nothing runs under autocast.
// LibTorch raises: expected scalar type BFloat16 but found Float.
#include <torch/torch.h>

#include <iostream>

struct Classifier : torch::nn::Module {
  Classifier() {
    hidden = register_module("hidden", torch::nn::Linear(16, 32));
    head = register_module("head", torch::nn::Linear(32, 4));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(hidden(x));  // dtype-lint-expect: DL101
    return head(x);
  }
  torch::nn::Linear hidden{nullptr}, head{nullptr};
};

torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& table) {
  return torch::matmul(tokens, table);  // dtype-lint-expect: DL101
}

int main() {
  torch::manual_seed(0);
  auto model = std::make_shared<Classifier>();
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto inputs = torch::randn({8, 16});
  auto targets = torch::randint(0, 4, {8});

  auto table = torch::randn({16, 16});
  auto tokens = torch::randn({8, 16}, torch::kBFloat16);
  try {
    auto embedded = embed(tokens, table);
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
  }

  try {
    for (int step = 0; step < 3; ++step) {
      optimizer.zero_grad();
      auto x = inputs.to(torch::kBFloat16);
      auto logits = model->forward(x);
      auto loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), targets);
      loss.backward();
      optimizer.step();
      std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
    }
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
    return 1;
  }
  return 0;
}
