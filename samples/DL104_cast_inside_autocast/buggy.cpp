// DL104 cast-inside-autocast: inside a CPU autocast region the features,
// stored in BFloat16, are cast to Float by hand "to keep the classifier in
// full precision", but autocast casts a linear's operands back to BFloat16;
// and the Float targets are cast to BFloat16 "to match" the predictions
// before mse_loss, which autocast runs in Float: the targets lose their
// precision for nothing on the way.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

struct Head : torch::nn::Module {
  Head() { fc = register_module("fc", torch::nn::Linear(32, 8)); }
  torch::nn::Linear fc{nullptr};
};

int main() {
  torch::manual_seed(0);
  auto head = std::make_shared<Head>();
  torch::optim::SGD optimizer(head->parameters(), 0.05);
  auto features = torch::randn({64, 32}).to(torch::kBFloat16);
  auto targets = torch::randn({64, 8});
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto prediction = head->fc(features.to(torch::kFloat));  // dtype-lint-expect: DL104
    auto loss = torch::mse_loss(prediction, targets.to(torch::kBFloat16));  // dtype-lint-expect: DL104
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
