// A LoRA-style custom autograd Function: the buffers it writes come through
// ctx->saved_data, its weights are a module's members made BFloat16 from a
// config's options.
#include <torch/torch.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct LoraConfig {
  torch::TensorOptions weight_options = torch::TensorOptions().dtype(torch::kBFloat16);
  torch::TensorOptions master_options = torch::TensorOptions().dtype(torch::kFloat);
};

struct LoraFn : torch::autograd::Function<LoraFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor a, torch::Tensor grad_buf,
                               torch::Tensor low_buf) {
    ctx->save_for_backward({x, a});
    ctx->saved_data["grad_buf"] = grad_buf;
    ctx->saved_data["low_buf"] = low_buf;
    return torch::matmul(x, a.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto x = saved[0];
    auto grad_buf = ctx->saved_data["grad_buf"].toTensor();
    auto low_buf = ctx->saved_data["low_buf"].toTensor();
    auto dy = grad_outputs[0];
    torch::matmul_out(grad_buf, dy.t(), x);  // dtype-lint-expect: DL102
    torch::matmul_out(low_buf, dy.t(), x);
    return {torch::Tensor(), grad_buf.to(torch::kBFloat16), torch::Tensor(), torch::Tensor()};
  }
};

class LoraLinearImpl : public torch::nn::Module {
 public:
  explicit LoraLinearImpl(const LoraConfig& cfg) {
    a_ = register_parameter("a", torch::randn({4, 8}, cfg.weight_options));
    grad_buf_ = torch::zeros({4, 8}, cfg.master_options);
    low_buf_ = torch::zeros({4, 8}, cfg.weight_options);
  }
  torch::Tensor forward(const torch::Tensor& x) { return LoraFn::apply(x, a_, grad_buf_, low_buf_); }

 private:
  torch::Tensor a_, grad_buf_, low_buf_;
};
TORCH_MODULE(LoraLinear);

int main() {
  LoraConfig cfg;
  LoraLinear lora(cfg);
  torch::nn::Sequential stack{LoraLinear(cfg), torch::nn::Functional(torch::relu)};
  // The stack holds BFloat16 adapters: a BFloat16 input is right, not a mismatch.
  stack->forward(torch::randn({2, 8}, torch::kBFloat16));
  lora->forward(torch::randn({2, 8}, torch::kBFloat16)).to(torch::kFloat).sum().backward();
}
