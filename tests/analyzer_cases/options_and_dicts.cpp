// Dtypes read back from TensorOptions members, and parameters walked through
// an OrderedDict's pairs(): the forms real configs and EMA updates take.
#include <torch/torch.h>

struct LeanConfig {
  torch::TensorOptions param_opts = torch::TensorOptions().dtype(torch::kBFloat16);
  double ema_decay = 0.99;
};

// The model is converted with the options' dtype: it is BFloat16 like its inputs (clean).
class LeanTrainer {
 public:
  explicit LeanTrainer(LeanConfig cfg) : cfg_(std::move(cfg)), net_(torch::nn::Linear(8, 8)) {
    net_->to(cfg_.param_opts.dtype().toScalarType());
  }
  torch::Tensor loss_of(const torch::Tensor& x) {
    auto recon = net_->forward(x.to(cfg_.param_opts));
    return torch::mse_loss(recon, x.to(cfg_.param_opts));  // BFloat16 has Float's range: no DL105
  }

 private:
  LeanConfig cfg_;
  torch::nn::Linear net_;
};

// Converted with a dtype the analysis cannot evaluate: no longer known to be Float.
void converted_to_a_runtime_dtype(torch::ScalarType dtype) {
  torch::nn::Linear layer(8, 8);
  layer->to(dtype);
  layer(torch::randn({2, 8}, torch::kHalf));
}

// A Half EMA shadow updated in place from the Float model: the update is rounded to Half.
void update_ema(torch::nn::Linear& model, torch::nn::Linear& ema, double decay) {
  ema->to(torch::kHalf);
  torch::NoGradGuard guard;
  auto live = model->named_parameters();
  for (const auto& [name, shadow] : ema->named_parameters().pairs()) {
    const auto& p = live[name];
    shadow.mul_(decay).add_(torch::ones_like(p, torch::kFloat), 1.0 - decay);  // dtype-lint-expect: DL102:5 {{in-place 'add_' computes Float but its destination 'shadow.mul_(decay)' is Half: the result is rounded to Half}}
  }
}

// The same walk with the update cast to the shadow's dtype first: clean.
void update_ema_cast(torch::nn::Linear& model, torch::nn::Linear& ema, double decay) {
  ema->to(torch::kHalf);
  torch::NoGradGuard guard;
  for (const auto& [name, shadow] : ema->named_parameters().pairs())
    shadow.mul_(decay).add_(torch::ones_like(shadow), 1.0 - decay);
}

// A local config whose options field is written (a device added) keeps its dtype.
struct Setup {
  int64_t dim = 8;
  torch::TensorOptions param_options = torch::TensorOptions().dtype(torch::kHalf);
};

torch::nn::Linear make_layer(torch::TensorOptions options) {
  torch::nn::Linear layer(8, 2);
  layer->to(options.device(), options.dtype().toScalarType());
  return layer;
}

void configured_layer(const torch::Device& device) {
  Setup setup;
  setup.param_options = setup.param_options.device(device);
  auto layer = make_layer(setup.param_options);
  layer(torch::randn({4, 8}));  // dtype-lint-expect: DL101:3 {{'linear' on operands of different dtypes outside autocast (input 'torch::randn({4, 8})'}}
  layer(torch::randn({4, 8}, setup.param_options));
}

// A workspace made with only the device of a BFloat16 weight's options is
// Float (opts.device() carries no dtype); the caches made with the options are
// BFloat16 (set AJ p09).
void decode_step(torch::nn::Linear qkv) {
  qkv->to(torch::kBFloat16);
  auto opts = qkv->weight.options();
  auto cache = torch::zeros({2, 4, 4}, opts);
  auto scores_ws = torch::empty({2, 4, 4}, opts.device());
  auto q = torch::randn({2, 4, 4}, opts);
  torch::bmm_out(scores_ws, q, cache.transpose(1, 2));  // dtype-lint-expect: DL102
  torch::bmm_out(cache, q, q);
}

int main() {
  LeanTrainer trainer(LeanConfig{});
  trainer.loss_of(torch::randn({2, 8})).to(torch::kFloat).backward();
  converted_to_a_runtime_dtype(torch::kHalf);
  torch::nn::Linear model(8, 8), ema(8, 8);
  update_ema(model, ema, 0.99);
  update_ema_cast(model, ema, 0.99);
  configured_layer(torch::kCPU);
  decode_step(torch::nn::Linear(4, 4));
}
