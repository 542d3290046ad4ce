// DL105 fixed: the precision-sensitive ops get Float inputs or a dtype=.
#include <torch/torch.h>

#include <iostream>

struct Student : torch::nn::Module {
  Student() { proj = register_module("proj", torch::nn::Linear(32, 10)); }
  torch::Tensor forward(torch::Tensor x) { return proj(x); }
  torch::nn::Linear proj{nullptr};
};

int main() {
  torch::manual_seed(0);
  auto student = std::make_shared<Student>();
  torch::optim::SGD optimizer(student->parameters(), 0.05);
  auto features = torch::randn({16, 32}).to(torch::kHalf);
  auto teacher_logits = torch::randn({16, 10}).to(torch::kHalf);

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto x = features.to(torch::kFloat);
    auto scale = x.norm();
    auto logits = student->forward(x / scale);
    auto loss = torch::mse_loss(logits, teacher_logits.to(torch::kFloat));
    auto energy = logits.abs().sum();
    (loss + 0.01 * energy).backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
