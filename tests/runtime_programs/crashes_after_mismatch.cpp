// A LibTorch program that crashes with a fatal signal after a mismatched
// matmul it caught. The finding must survive the signal.
#include <torch/torch.h>

#include <csignal>

int main() {
  try {
    torch::randn({2, 4}, torch::kHalf).mm(torch::randn({4, 4}));  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
  }
  std::raise(SIGSEGV);
  return 0;
}
