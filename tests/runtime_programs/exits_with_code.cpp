// Clean LibTorch work, then an exit code and output the hooks must pass through.
#include <torch/torch.h>

#include <iostream>

int main(int argc, char** argv) {
  auto x = torch::randn({2, 4});
  auto y = x.mm(torch::randn({4, 4})).softmax(1);
  std::cout << "result " << y.size(0) << " rows, arg " << (argc > 1 ? argv[1] : "none") << std::endl;
  std::cerr << "to stderr" << std::endl;
  return 7;
}
