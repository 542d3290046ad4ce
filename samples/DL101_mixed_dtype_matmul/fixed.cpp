// DL101 fixed: the BFloat16 input meets the Float model only under CPU
// autocast, which casts both operands of every linear; the helper casts
// its operands to one dtype itself.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

struct Classifier : torch::nn::Module {
  Classifier() {
    hidden = register_module("hidden", torch::nn::Linear(16, 32));
    head = register_module("head", torch::nn::Linear(32, 4));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(hidden(x));
    return head(x);
  }
  torch::nn::Linear hidden{nullptr}, head{nullptr};
};

torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& table) {
  return torch::matmul(tokens.to(table.dtype()), table);
}

int main() {
  torch::manual_seed(0);
  auto model = std::make_shared<Classifier>();
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto inputs = torch::randn({8, 16});
  auto targets = torch::randint(0, 4, {8});

  auto table = torch::randn({16, 16});
  auto tokens = torch::randn({8, 16}, torch::kBFloat16);
  auto embedded = embed(tokens, table);

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto x = inputs.to(torch::kBFloat16);
    at::autocast::set_cpu_enabled(true);
    auto logits = model->forward(x);
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    auto loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), targets);
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
