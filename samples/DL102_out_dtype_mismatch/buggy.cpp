// DL102 out-dtype-mismatch: a hand-written LoRA backward (the "fast LoRA"
// pattern) writes BFloat16 products into the Float gradient buffers it keeps.
// LibTorch raises: Expected out tensor to have dtype c10::BFloat16, but got float instead.
#include <torch/torch.h>

#include <iostream>

void lora_grad_a(const torch::Tensor& x, const torch::Tensor& grad_out, const torch::Tensor& lora_b,
                 torch::Tensor& grad_a) {
  auto grad_h = grad_out.mm(lora_b);  // [N, r]
  at::mm_out(grad_a, grad_h.t(), x);  // dtype-lint-expect: DL102
}

void lora_grad_b(const torch::Tensor& x, const torch::Tensor& grad_out, const torch::Tensor& lora_a,
                 torch::Tensor& grad_b) {
  auto h = x.mm(lora_a.t());       // [N, r]
  at::mm_out(grad_b, grad_out.t(), h);  // dtype-lint-expect: DL102
}

int main() {
  torch::manual_seed(0);
  const int64_t n = 8, in = 16, out = 12, rank = 4;
  auto x = torch::randn({n, in}, torch::kBFloat16);
  auto lora_a = torch::randn({rank, in}, torch::kBFloat16) * 0.01;
  auto lora_b = torch::zeros({out, rank}, torch::kBFloat16);
  auto grad_a = torch::zeros({rank, in});  // Float master gradients
  auto grad_b = torch::zeros({out, rank});
  auto grad_out = torch::randn({n, out}, torch::kBFloat16);
  int failures = 0;
  try {
    lora_grad_a(x, grad_out, lora_b, grad_a);
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
    ++failures;
  }
  try {
    lora_grad_b(x, grad_out, lora_a, grad_b);
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
    ++failures;
  }
  return failures ? 1 : 0;
}
