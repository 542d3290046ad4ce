// DL105 low-precision-reduction: a BFloat16 student is distilled from a
// teacher; softmax, layer_norm and the loss all run in BFloat16 outside
// autocast. Nothing raises: the loss is just coarse, and in Half it overflows.
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
  student->to(torch::kBFloat16);
  torch::optim::SGD optimizer(student->parameters(), 0.05);
  auto features = torch::randn({16, 32}).to(torch::kBFloat16);
  auto teacher_logits = torch::randn({16, 10});

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto x = torch::layer_norm(features, {32});  // dtype-lint-expect: DL105
    auto logits = student->forward(x);
    auto student_probs = torch::softmax(logits, -1);  // dtype-lint-expect: DL105
    auto teacher_probs = torch::softmax(teacher_logits, -1).to(torch::kBFloat16);
    auto loss = (student_probs - teacher_probs).pow(2).mean();  // dtype-lint-expect: DL105
    loss.to(torch::kFloat).backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
