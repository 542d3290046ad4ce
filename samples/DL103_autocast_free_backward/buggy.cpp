// DL103 autocast-free-backward: forward runs under CPU autocast, which casts
// x and weight to BFloat16 for the mm; backward runs without autocast and
// multiplies the BFloat16 gradient with the saved Float weight.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <iostream>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct LinearFunction : torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor weight) {
    ctx->save_for_backward({x, weight});
    return x.mm(weight.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto x = saved[0];
    auto weight = saved[1];
    auto grad = grad_outputs[0];
    auto grad_x = grad.mm(weight);  // dtype-lint-expect: DL103
    auto grad_weight = grad.t().mm(x.to(grad.dtype()));
    return {grad_x, grad_weight};
  }
};

int main() {
  torch::manual_seed(0);
  auto weight = torch::randn({4, 8}, torch::requires_grad());
  auto x = torch::randn({2, 8});
  at::autocast::set_cpu_enabled(true);
  auto y = LinearFunction::apply(x, weight);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  auto loss = y.to(torch::kFloat).sum();
  try {
    loss.backward();
  } catch (const c10::Error& e) {
    std::cerr << e.what_without_backtrace() << "\n";
    return 1;
  }
  std::cout << "grad norm " << weight.grad().norm().item<float>() << "\n";
  return 0;
}
