// A LoRA-style custom backward writes BFloat16 products into a Float
// buffer: LibTorch raises "Expected out tensor to have dtype c10::BFloat16,
// but got float instead" from the autograd engine. The finding must be made
// there, before the op throws; the program is also built optimized (-O2 -g),
// where LibTorch's inline code is inlined into these functions. The
// backward()s run on another thread than their forward, as a trainer's
// worker thread runs them (and as CUDA's autograd engine runs every backward
// on its device thread): the engine's ops there are checked as any.
#include <torch/torch.h>

#include <iostream>
#include <thread>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct LoraFn : torch::autograd::Function<LoraFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor a, torch::Tensor grad_buf) {
    ctx->save_for_backward({x, a});
    ctx->saved_data["grad_buf"] = grad_buf;
    return torch::matmul(x, a.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad_buf = ctx->saved_data["grad_buf"].toTensor();
    torch::matmul_out(grad_buf, grad_outputs[0].t(), saved[0]);  // dtype-lint-expect: DL102
    return {torch::Tensor(), grad_buf, torch::Tensor()};
  }
};

__attribute__((noinline)) torch::Tensor mixed(const torch::Tensor& half, const torch::Tensor& weights) {
  return half.mm(weights);  // dtype-lint-expect: DL101
}

int main() {
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  auto a = torch::randn({3, 4}, torch::dtype(torch::kBFloat16).requires_grad(true));
  auto grad_buf = torch::zeros({3, 4});
  auto loss = LoraFn::apply(x, a, grad_buf).to(torch::kFloat).sum();
  std::thread([&] {
    try {
      loss.backward();
    } catch (const c10::Error& e) {
      std::cout << "backward failed\n";
    }
  }).join();
  auto w = torch::randn({4}, torch::dtype(torch::kBFloat16).requires_grad(true));
  auto low_precision_loss = torch::dot(torch::randn({4}, torch::kBFloat16), w);
  std::thread([&] { low_precision_loss.backward(); }).join();  // dtype-lint-expect: DL106
  try {
    mixed(torch::randn({2, 4}, torch::kHalf), torch::randn({4, 4}));
  } catch (const c10::Error& e) {
    std::cout << "mm failed\n";
  }
  return 0;
}
