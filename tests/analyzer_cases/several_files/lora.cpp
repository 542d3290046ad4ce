#include "lora.h"

namespace lm {

torch::Tensor LoraMatmul::forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, torch::Tensor weight,
                                  torch::Tensor lora_a) {
  auto a = lora_a.to(x.scalar_type());
  ctx->save_for_backward({x, lora_a});
  return x.mm(weight.t()) + x.mm(a.t()).sum(1, true);
}

torch::autograd::tensor_list LoraMatmul::backward(torch::autograd::AutogradContext* ctx,
                                                  torch::autograd::tensor_list grad_outputs) {
  auto saved = ctx->get_saved_variables();
  auto grad_a = torch::empty_like(saved[1]);
  at::mm_out(grad_a, grad_outputs[0].sum(1, true).expand({-1, grad_a.size(0)}).t(), saved[0]);  // dtype-lint-expect: DL102:3 {{'mm_out' writes a BFloat16 result into a Float destination 'grad_a'; out= variants are never autocast}}
  return {torch::Tensor(), torch::Tensor(), grad_a};
}

LoraLinearImpl::LoraLinearImpl(int64_t in, int64_t out, int64_t rank) {
  weight = register_buffer("weight", torch::randn({out, in}));
  lora_a = register_parameter("lora_a", torch::zeros({rank, in}));
}

torch::Tensor LoraLinearImpl::forward(const torch::Tensor& x) { return LoraMatmul::apply(x, weight, lora_a); }

}  // namespace lm
