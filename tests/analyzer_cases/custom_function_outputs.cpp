// A custom Function with two outputs of different dtypes: each gradient in
// backward has the dtype of its output, and the saved tensors are taken by index.
#include <torch/torch.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SplitProjection : torch::autograd::Function<SplitProjection> {
  static variable_list forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor w_low, torch::Tensor w_full) {
    ctx->save_for_backward({x.to(torch::kBFloat16), x, w_low, w_full});
    auto low = torch::matmul(x.to(torch::kBFloat16), w_low.t());
    auto full = torch::matmul(x, w_full.t());
    return {low, full};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto x_low = saved[0];
    auto x_full = saved[1];
    auto grad_w_low = torch::zeros({4, 8}, torch::kFloat);
    auto grad_w_full = torch::zeros({4, 8}, torch::kFloat);
    torch::matmul_out(grad_w_low, grad_outputs[0].t(), x_low);  // dtype-lint-expect: DL102:5 {{'matmul_out' writes a BFloat16 result into a Float destination 'grad_w_low'; out= variants are never autocast}}
    torch::matmul_out(grad_w_full, grad_outputs[1].t(), x_full);
    auto dx = torch::matmul(grad_outputs[1], saved[3]);
    return {dx, grad_w_low.to(torch::kBFloat16), grad_w_full};
  }
};

int main() {
  auto x = torch::randn({2, 8}, torch::requires_grad());
  auto w_low = torch::randn({4, 8}, torch::dtype(torch::kBFloat16).requires_grad(true));
  auto w_full = torch::randn({4, 8}, torch::requires_grad());
  auto outputs = SplitProjection::apply(x, w_low, w_full);
  (outputs[0].to(torch::kFloat).sum() + outputs[1].sum()).backward();
}
