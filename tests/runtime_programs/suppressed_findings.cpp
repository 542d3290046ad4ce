// Runtime findings honour the same NOLINT comments as static ones: a
// suppressed mismatch is not reported, the unsuppressed one is.
#include <torch/torch.h>

void mismatch(const torch::Tensor& a, const torch::Tensor& b, int line_kind) {
  try {
    switch (line_kind) {
      case 0: a.mm(b); break;  // dtype-lint-expect: DL101
      case 1: a.mm(b); break;  // NOLINT(DL101)
      // NOLINTNEXTLINE(DL1*)
      case 2: a.mm(b); break;
      case 3: a.mm(b); break;  // NOLINT(DL102): another rule's suppression keeps DL101  dtype-lint-expect: DL101
    }
  } catch (const c10::Error&) {
  }
}

int main() {
  const auto half = torch::randn({2, 4}, torch::kHalf);
  const auto weights = torch::randn({4, 4});
  for (int kind = 0; kind < 4; ++kind) mismatch(half, weights, kind);
  return 0;
}
