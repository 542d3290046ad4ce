// The program's last work casts values beyond Half's range: counts made on a
// device arrive after the cast, so the last ones are read as the process
// ends (run with DTYPE_LINT_DEFER_CPU_COUNTS=1, the CPU stands in for the
// device). `exit` as argv[1] ends through exit() from a function.
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

__attribute__((noinline)) void finish(bool viaExit, const torch::Tensor& half) {
  std::cout << "cast " << half.scalar_type() << "\n";
  if (viaExit) std::exit(3);
}

int main(int argc, char** argv) {
  auto activations = torch::full({64}, 1.0e5);
  auto half = activations.to(torch::kHalf);  // dtype-lint-expect: DL302
  finish(argc > 1 && std::strcmp(argv[1], "exit") == 0, half);
  return 0;
}
