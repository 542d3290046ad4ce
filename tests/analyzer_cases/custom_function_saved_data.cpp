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
    torch::matmul_out(grad_buf, dy.t(), x);  // dtype-lint-expect: DL102:5 {{'matmul_out' writes a BFloat16 result into a Float destination 'grad_buf'; out= variants are never autocast}}
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

// module->to(dtype) converts only what the module registers: a scratch buffer
// kept as a plain member stays Float while the adapter becomes BFloat16.
struct ScratchLoraFn : torch::autograd::Function<ScratchLoraFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor a, torch::Tensor scratch) {
    ctx->save_for_backward({x, a});
    ctx->saved_data["scratch"] = scratch;
    return x.matmul(a.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto scratch = ctx->saved_data["scratch"].toTensor();
    at::mm_out(scratch, grad_outputs[0].t(), saved[0]);  // dtype-lint-expect: DL102
    return {torch::Tensor(), scratch.to(saved[1].scalar_type()), torch::Tensor()};
  }
};

struct ScratchAdapterImpl : torch::nn::Module {
  ScratchAdapterImpl() {
    a = register_parameter("a", torch::randn({4, 8}));
    stats = register_buffer("stats", torch::zeros({4}));
    scratch = torch::zeros({4, 8}, torch::kFloat);  // not registered: to() leaves it Float
    norm_log = torch::zeros({1}, torch::kFloat);
  }
  torch::Tensor forward(const torch::Tensor& x) { return ScratchLoraFn::apply(x, a, scratch); }
  // A Float diagnostics member of a BFloat16 module: a Float reduction, silent.
  double logged_norm() const { return norm_log.norm().item<double>(); }
  // A registered buffer follows the module: a BFloat16 reduction, which has Float's range (no DL105).
  double stats_norm() const { return stats.norm().item<double>(); }
  torch::Tensor a, stats, scratch, norm_log;
};
TORCH_MODULE(ScratchAdapter);

void train_bfloat16_adapter_with_float_scratch() {
  ScratchAdapter adapter;
  adapter->to(torch::kBFloat16);
  auto y = adapter(torch::randn({2, 8}, torch::kBFloat16));
  y.to(torch::kFloat).sum().backward();
  adapter->logged_norm();
  adapter->stats_norm();
}
