// What the hooks cost an op: no RecordFunction. A callback on op records
// makes LibTorch build a record for every op and every op inside it (more
// than the checks themselves cost a tiny GPU op's CPU side). Prints whether
// any callback asks for op records; the hooks must still find the mismatch.
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::nn::Linear layer(4, 4);
  const auto input = torch::randn({2, 4}).to(torch::kHalf);
  try {
    layer(input);  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
    // LibTorch rejects it after the hooks have reported it.
  }
  std::cout << "op records: " << (at::getStepCallbacksUnlessEmpty(at::RecordScope::FUNCTION) ? "made" : "none")
            << std::endl;
  return 0;
}
