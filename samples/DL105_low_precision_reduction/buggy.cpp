// DL105 low-precision-reduction: a student is distilled from a teacher whose
// logits, like the features, are kept in Half to save memory; the features'
// norm, the squared error and the logits' magnitude are all reduced in Half outside
// autocast. Nothing raises: past 65504 the sums overflow to inf and the loss
// turns NaN. (BFloat16 has Float's range: the same code in BFloat16 is fine.)
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
    auto scale = features.norm();  // dtype-lint-expect: DL105
    auto logits = student->forward((features / scale).to(torch::kFloat)).to(torch::kHalf);
    auto loss = (logits - teacher_logits).pow(2).mean();  // dtype-lint-expect: DL105
    auto energy = logits.abs().sum();  // dtype-lint-expect: DL105
    (loss + 0.01 * energy).to(torch::kFloat).backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
