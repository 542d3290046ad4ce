// A LibTorch program that dies on a mismatched matmul (uncaught c10::Error:
// std::terminate, abort). The finding must survive it.
#include <torch/torch.h>

#include <iostream>

int main() {
  std::cout << "training starts" << std::endl;
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  auto w = torch::randn({4, 4});
  auto y = x.mm(w);  // dtype-lint-expect: DL101
  std::cout << y.sum().item<float>() << std::endl;
  return 0;
}
