// LibTorch's C++ frontend adds a Linear's bias in place inside its forward
// (for a 3-D input, torch::nn::functional::linear runs matmul, then
// `output += bias`): under autocast that in-place add mixes BFloat16 and
// Float in LibTorch's own code, not in the user's. The user's own in-place
// add of the same kind is theirs.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::nn::Linear fc(3, 8);
  auto points = torch::rand({4, 5, 3});
  torch::NoGradGuard noGrad;
  at::autocast::set_cpu_enabled(true);
  auto features = fc->forward(points);
  auto offset = torch::ones({8});
  features += offset;  // dtype-lint-expect: DL102
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  std::cout << features.scalar_type() << "\n";
  return 0;
}
