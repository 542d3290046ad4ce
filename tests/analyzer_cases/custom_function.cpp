// DL103: custom autograd functions; backward never runs under autocast.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct MatmulFn : torch::autograd::Function<MatmulFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor a, torch::Tensor b) {
    ctx->save_for_backward({a, b});
    return a.matmul(b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad = grad_outputs[0];
    auto grad_a = grad.matmul(saved[1].t());  // dtype-lint-expect: DL103:19 {{'matmul' in a custom autograd backward on operands of different dtypes ('grad'}}
    auto grad_b = saved[0].t().matmul(grad);  // dtype-lint-expect: DL103
    return {grad_a, grad_b};
  }
};

struct CastingFn : torch::autograd::Function<CastingFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor a, torch::Tensor b) {
    ctx->save_for_backward({a, b});
    return a.matmul(b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad = grad_outputs[0].to(saved[0].dtype());
    return {grad.matmul(saved[1].t()), saved[0].t().matmul(grad)};
  }
};

void under_autocast() {
  auto a = torch::randn({4, 4}, torch::requires_grad());
  auto b = torch::randn({4, 4}, torch::requires_grad());
  at::autocast::set_cpu_enabled(true);
  auto y = MatmulFn::apply(a, b);
  auto z = CastingFn::apply(a, b);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

struct PlainFn : torch::autograd::Function<PlainFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor a, torch::Tensor b) {
    ctx->save_for_backward({a, b});
    return a.matmul(b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad = grad_outputs[0];
    return {grad.matmul(saved[1].t()), saved[0].t().matmul(grad)};
  }
};

void without_autocast() {
  auto a = torch::randn({4, 4}, torch::requires_grad());
  auto b = torch::randn({4, 4}, torch::requires_grad());
  auto y = PlainFn::apply(a, b);
}

// Under torch::NoGradGuard no graph is built: a custom Function's backward
// never runs, so the Float-by-Half product it would compute is not reported.
struct FloatGradFn : torch::autograd::Function<FloatGradFn> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, torch::Tensor w) {
    ctx->save_for_backward({x, w});
    return x * 2;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto grad_w = grad_outputs[0].to(torch::kFloat).t().mm(saved[0]);
    return {torch::Tensor(), grad_w};
  }
};

void evaluate_without_grad() {
  torch::NoGradGuard no_grad;
  auto y = FloatGradFn::apply(torch::randn({2, 4}, torch::kHalf), torch::randn({4, 4}));
}

// A backward that makes the mismatch itself (dequantized BFloat16 weights, a
// Float gradient): on its own it is a mixed matmul, and with the forward run
// under autocast it is DL103. One finding, the one that says why.
struct DequantMatmulFn : torch::autograd::Function<DequantMatmulFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor qweight) {
    ctx->save_for_backward({qweight});
    return x.matmul(qweight.to(torch::kBFloat16).t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto w = ctx->get_saved_variables()[0].to(torch::kBFloat16);
    auto g = grad_outputs[0].to(torch::kFloat);
    auto grad_x = g.matmul(w);  // dtype-lint-expect: DL103
    return {grad_x, torch::Tensor()};
  }
};

void dequantized_under_autocast() {
  auto x = torch::randn({4, 8}, torch::requires_grad());
  auto q = torch::randint(-127, 127, {16, 8}).to(torch::kChar);
  at::autocast::set_cpu_enabled(true);
  auto y = DequantMatmulFn::apply(x, q);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}
