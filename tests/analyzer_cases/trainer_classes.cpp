// Real projects keep the model, the optimizer and the scaler as members of a
// trainer built in its constructor, take dtypes and flags from a config
// struct, and call helpers and lambdas from methods.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <functional>
#include <memory>

#include "common/grad_scaler.h"

struct TrainConfig {
  bool use_half = true;       // never changed: its default holds everywhere
  bool use_bias_fix = false;
  torch::Dtype input_dtype = torch::kHalf;
  double lr = 1e-3;
  double adam_eps = 1e-4;
  int64_t hidden = 8;
};

struct NetImpl : torch::nn::Module {
  explicit NetImpl(const TrainConfig& cfg)
      : fc(register_module("fc", torch::nn::Linear(8, cfg.hidden))),
        drop(register_module("drop", torch::nn::Dropout(0.1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return drop(fc(x)); }
  torch::nn::Linear fc;
  torch::nn::Dropout drop;
};
TORCH_MODULE(Net);

// The model made Half in the constructor under a flag that is on, trained
// through a scaler in another method.
class HalfTrainer {
 public:
  explicit HalfTrainer(const TrainConfig& cfg) : cfg_(cfg), model_(cfg) {
    if (cfg_.use_half) model_->to(torch::kHalf);
    optimizer_ = std::make_unique<torch::optim::AdamW>(model_->parameters(), torch::optim::AdamWOptions(cfg_.lr));  // dtype-lint-expect: DL304:78 {{AdamW 'optimizer_' eps=1e-08 is zero in Half, the dtype of its parameters}}
  }
  void fit() {
    for (int i = 0; i < 3; ++i) train_step(torch::randn({4, 8}, cfg_.input_dtype));
  }

 private:
  void train_step(const torch::Tensor& x) {
    optimizer_->zero_grad();
    auto loss = model_->forward(x).to(torch::kFloat).pow(2).mean();
    scaler_.scale(loss).backward();
    scaler_.step(*optimizer_);  // dtype-lint-expect: DL202:5 {{'scaler_' unscales the gradients of 'optimizer_', whose parameters are Half}}
    scaler_.update();
  }

  TrainConfig cfg_;
  Net model_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  GradScaler scaler_;
};

// The same shape done right: a Float model, the clip after the unscale, and
// an eps the config sets (not judged: the analysis does not read it).
class FloatTrainer {
 public:
  explicit FloatTrainer(const TrainConfig& cfg)
      : cfg_(cfg), model_(cfg), optimizer_(model_->parameters(), torch::optim::AdamOptions(cfg.lr).eps(cfg.adam_eps)) {
    if (cfg_.use_bias_fix) model_->to(torch::kHalf);
  }
  void train_step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    auto loss = model_->forward(x).pow(2).mean();
    scaler_.scale(loss).backward();
    scaler_.unscale_(optimizer_);
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
    scaler_.step(optimizer_);
    scaler_.update();
  }
  // Clipping before the unscale, in a method whose caller is not seen: the
  // members still hold what the constructor made of them.
  void train_step_clipping_early(const torch::Tensor& x) {
    optimizer_.zero_grad();
    auto loss = model_->forward(x).pow(2).mean();
    scaler_.scale(loss).backward();
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);  // dtype-lint-expect: DL205:5 {{gradients clipped while they hold the scaled loss's gradients}}
    scaler_.step(optimizer_);
    scaler_.update();
  }

 private:
  TrainConfig cfg_;
  Net model_;
  torch::optim::Adam optimizer_;
  GradScaler scaler_;
};

// A lambda called in the method is analyzed there, with what it captures.
class LambdaTrainer {
 public:
  LambdaTrainer() : fc_(torch::nn::Linear(8, 8)) {}
  void run() {
    auto half_batch = torch::randn({4, 8}, torch::kHalf);
    auto step = [&](const torch::Tensor& x) { return fc_(x); };  // dtype-lint-expect: DL101:54 {{'linear' on operands of different dtypes outside autocast (input 'x': Half, the parameters of 'fc_': Float)}}
    step(half_batch);
    auto flt = [&]() { return fc_(half_batch.to(torch::kFloat)); };
    flt();
  }

 private:
  torch::nn::Linear fc_;
};

// Members set up in an init method the caller calls after construction.
class SetupTrainer {
 public:
  void setup() {
    model_->to(torch::kHalf);
    optimizer_.reset(new torch::optim::Adam(model_->parameters()));  // dtype-lint-expect: DL304
  }

 private:
  torch::nn::Linear model_{torch::nn::Linear(8, 8)};
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

// Precision: what a conversion changes, and what autocast leaves alone.
struct PositionalImpl : torch::nn::Module {
  PositionalImpl() : fc(register_module("fc", torch::nn::Linear(8, 8))) {
    pos_ = register_parameter("pos", torch::zeros({1, 8}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc(x + pos_); }
  torch::nn::Linear fc;
  torch::Tensor pos_;
};
TORCH_MODULE(Positional);

class PureHalfTrainer {
 public:
  PureHalfTrainer() {
    model_->to(torch::kHalf);  // converts pos_ too: x + pos_ stays Half
    for (auto* m : {first_.ptr().get(), second_.ptr().get()}) m->to(torch::kBFloat16);
  }
  void step() {
    model_->forward(torch::randn({2, 8}, torch::kHalf));
    first_->forward(torch::randn({2, 8}, torch::kBFloat16));
  }
  // Autocast casts the logits to Float for the loss; the class indices are left alone.
  torch::Tensor loss_under_autocast(const torch::Tensor& labels) {
    at::autocast::set_enabled(true);
    auto logits = fc_(torch::randn({2, 8}));
    auto loss = torch::nn::functional::cross_entropy(logits, labels);
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    return loss;
  }

 private:
  Positional model_;
  Positional first_, second_;
  torch::nn::Linear fc_{torch::nn::Linear(8, 4)};
};

// setup() converts the model after construction; fit(), whose caller is not
// seen here, feeds it Half inputs: the model may be Half there, so nothing is
// reported (the constructor alone would say Float).
class LateHalfTrainer {
 public:
  LateHalfTrainer() : model_(torch::nn::Linear(8, 2)) {}
  void setup();
  void fit();

 private:
  torch::nn::Linear model_;
};

void LateHalfTrainer::setup() { model_->to(torch::kHalf); }
void LateHalfTrainer::fit() { model_(torch::randn({4, 8}).to(torch::kHalf)); }

int main() {
  TrainConfig cfg;
  cfg.hidden = 8;
  HalfTrainer(cfg).fit();
  FloatTrainer trainer(cfg);
  trainer.train_step(torch::randn({4, 8}));
  LambdaTrainer().run();
  PureHalfTrainer pure;
  pure.step();
  pure.loss_under_autocast(torch::zeros({2}, torch::kLong));
  SetupTrainer().setup();
}

// A callable member whose one target is a lambda given in the constructor is
// followed where it is called: here the backward it runs is not scaled.
class HookedTrainer {
 public:
  HookedTrainer() : model_(8, 1), optimizer_(model_->parameters(), 0.1) {
    run_backward_ = [](const torch::Tensor& loss) { loss.backward(); };
    clip_ = [this]() {
      torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
    };
  }

  void step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    auto loss = model_(x).pow(2).mean();
    run_backward_(loss);
    scaler_.step(optimizer_);  // dtype-lint-expect: DL207:5 {{'scaler_'.step('optimizer_') but this iteration's backward() ran on the unscaled loss}}
    scaler_.update();
  }
  void scaled_step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    scaler_.scale(model_(x).pow(2).mean()).backward();
    clip_();  // dtype-lint-expect: DL205
    scaler_.step(optimizer_);
    scaler_.update();
  }

 private:
  torch::nn::Linear model_;
  torch::optim::SGD optimizer_;
  GradScaler scaler_;
  std::function<void(const torch::Tensor&)> run_backward_;
  std::function<void()> clip_;
};

// A hook given through a setter: the lambdas its callers pass are its targets.
class ConfigurableTrainer {
 public:
  ConfigurableTrainer() : model_(8, 1), optimizer_(model_->parameters(), 0.1) {}
  void set_backward(std::function<void(const torch::Tensor&)> fn);

  void step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    backward_(model_(x).pow(2).mean());
    scaler_.step(optimizer_);  // dtype-lint-expect: DL207
    scaler_.update();
  }

 private:
  torch::nn::Linear model_;
  torch::optim::SGD optimizer_;
  GradScaler scaler_;
  std::function<void(const torch::Tensor&)> backward_;
};

void ConfigurableTrainer::set_backward(std::function<void(const torch::Tensor&)> fn) { backward_ = std::move(fn); }

void configure_plain_backward(ConfigurableTrainer& trainer) {
  trainer.set_backward([](const torch::Tensor& loss) { loss.backward(); });
}

// Two setters' callers pass different lambdas: the hook is not followed.
class TwoHookTrainer {
 public:
  TwoHookTrainer() : model_(8, 1), optimizer_(model_->parameters(), 0.1) {}
  void set_backward(std::function<void(const torch::Tensor&)> fn) { backward_ = std::move(fn); }
  void step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    backward_(scaler_.scale(model_(x).pow(2).mean()));
    scaler_.step(optimizer_);
    scaler_.update();
  }

 private:
  torch::nn::Linear model_;
  torch::optim::SGD optimizer_;
  GradScaler scaler_;
  std::function<void(const torch::Tensor&)> backward_;
};

void configure_two_ways(TwoHookTrainer& trainer, bool plain) {
  if (plain) trainer.set_backward([](const torch::Tensor& loss) { loss.backward(); });
  else trainer.set_backward([](const torch::Tensor& loss) { loss.backward(); });
}

// A local lambda handed to a helper's std::function parameter: the helper's
// call runs it, after the scaled backward and before any unscale.
double run_epoch_with_clip(torch::nn::Linear& model, torch::optim::SGD& optimizer, GradScaler& scaler,
                           const std::function<double()>& clip_fn) {
  optimizer.zero_grad();
  scaler.scale(model(torch::randn({4, 8})).pow(2).mean()).backward();
  const double norm = clip_fn();  // dtype-lint-expect: DL205
  scaler.step(optimizer);
  scaler.update();
  return norm;
}

void train_with_a_clip_callback(double max_norm) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  GradScaler scaler;
  auto clip_gradients = [&model, max_norm]() {
    return torch::nn::utils::clip_grad_norm_(model->parameters(), max_norm);
  };
  run_epoch_with_clip(model, optimizer, scaler, clip_gradients);
}

// A std::function variable handed to a helper is followed like the lambda it
// holds (before, the unknown call forgot the scaler's state), and an optional
// autocast dtype's value_or gives the dtype the config set.
struct AccumulationConfig {
  int micro_batches = 4;
  c10::optional<at::ScalarType> autocast_dtype = at::kBFloat16;
};
using BatchSource = std::function<torch::Tensor()>;

void accumulate_then_step(torch::nn::Linear& model, torch::optim::SGD& optimizer, GradScaler& scaler,
                          const AccumulationConfig& cfg, const BatchSource& next_batch) {
  for (int m = 0; m < cfg.micro_batches; ++m) {
    auto x = next_batch();
    at::autocast::set_autocast_cpu_dtype(cfg.autocast_dtype.value_or(at::kHalf));
    at::autocast::set_cpu_enabled(true);
    auto loss = model(x).to(torch::kFloat).pow(2).mean();
    auto scaled = scaler.scale(loss);  // dtype-lint-expect: DL209 {{'scaler' unscales the gradients of a loss computed under BFloat16 autocast: BFloat16 has Float's range and needs no loss scaling}}
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    scaled.backward();
    scaler.unscale_(optimizer);  // dtype-lint-expect: DL201:5 {{gradients of 'optimizer' unscaled again before 'scaler'.update()}}
  }
  scaler.step(optimizer);
  scaler.update();
}

void train_with_a_batch_source() {
  AccumulationConfig cfg;
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  GradScaler scaler;
  BatchSource next_batch = [] { return torch::randn({4, 8}); };
  for (int update = 0; update < 3; ++update) accumulate_then_step(model, optimizer, scaler, cfg, next_batch);
}

// Reference members bound by an aggregate initializer or a constructor are
// the caller's scaler and optimizer; the warmup step's unscaled backward is
// its own cause even after a later iteration skipped update().
struct WarmupSession {
  torch::nn::Linear& net;
  torch::optim::SGD& opt;
  GradScaler& scaler;
  int warmup_steps;

  void warmup_step(const torch::Tensor& x) {
    opt.zero_grad();
    net(x).pow(2).mean().backward();
    scaler.step(opt);  // dtype-lint-expect: DL207
    scaler.update();
  }
  void run(int total_steps) {
    for (int step = 0; step < total_steps; ++step) {
      auto x = torch::randn({4, 8});
      if (step < warmup_steps) {
        warmup_step(x);
        continue;
      }
      opt.zero_grad();
      scaler.scale(net(x).pow(2).mean()).backward();
      scaler.step(opt);  // dtype-lint-expect: DL204:7 {{'scaler'.step('opt') reached again without 'scaler'.update() since the previous step()}}
      if (step % 10 != 0) continue;
      scaler.update();
    }
  }
};

void run_warmup_session() {
  torch::nn::Linear net(8, 1);
  torch::optim::SGD opt(net->parameters(), 0.1);
  GradScaler scaler;
  WarmupSession session{net, opt, scaler, 5};
  session.run(100);
}

class BorrowingTrainer {
 public:
  BorrowingTrainer(torch::nn::Linear& net, torch::optim::SGD& opt, GradScaler& scaler)
      : net_(net), opt_(opt), scaler_(scaler) {}
  void step(const torch::Tensor& x) {
    opt_.zero_grad();
    scaler_.scale(net_(x).pow(2).mean()).backward();
    scaler_.unscale_(opt_);
    scaler_.unscale_(opt_);  // dtype-lint-expect: DL201
    scaler_.step(opt_);
    scaler_.update();
  }

 private:
  torch::nn::Linear& net_;
  torch::optim::SGD& opt_;
  GradScaler& scaler_;
};

void train_borrowing() {
  torch::nn::Linear net(8, 1);
  torch::optim::SGD opt(net->parameters(), 0.1);
  GradScaler scaler;
  BorrowingTrainer trainer(net, opt, scaler);
  trainer.step(torch::randn({4, 8}));
}

// The constructor calls a method that makes the inference copy (Half under a
// flag); another method uses it under the same flag. What the constructor
// establishes through that method holds in the other one.
struct InferenceConfig {
  bool half_inference = false;
};

InferenceConfig inferenceConfig(const char* value) {
  InferenceConfig cfg;
  if (value) cfg.half_inference = std::string(value) != "0";
  return cfg;
}

struct InferNetImpl : torch::nn::Module {
  InferNetImpl() { head = register_module("head", torch::nn::Linear(8, 2)); }
  torch::Tensor forward(const torch::Tensor& x) { return head(x); }
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(InferNet);

class InferenceCopyTrainer {
 public:
  explicit InferenceCopyTrainer(const InferenceConfig& cfg) : cfg_(cfg) { refresh(); }
  void refresh() {
    infer_ = InferNet();
    if (cfg_.half_inference) infer_->to(torch::kHalf);
  }
  torch::Tensor predict(const torch::Tensor& images) {
    auto in = cfg_.half_inference ? images.to(torch::kHalf) : images;
    return infer_(in);
  }

 private:
  InferenceConfig cfg_;
  InferNet infer_{nullptr};
};

class UnconvertedCopyTrainer {
 public:
  explicit UnconvertedCopyTrainer(const InferenceConfig& cfg) : cfg_(cfg) { refresh(); }
  void refresh() { infer_ = torch::nn::Linear(8, 2); }
  torch::Tensor predict(const torch::Tensor& images) {
    auto in = cfg_.half_inference ? images.to(torch::kHalf) : images;
    return infer_(in);  // dtype-lint-expect: DL101
  }

 private:
  InferenceConfig cfg_;
  torch::nn::Linear infer_{nullptr};
};

// A functor's operator() is followed like a method: its members are what its
// constructor made them (Half copies of trained weights, one per expert).
class HalfServingCopy {
 public:
  explicit HalfServingCopy(const std::vector<torch::Tensor>& experts) {
    for (const auto& w : experts) experts_.push_back(w.detach().to(torch::kHalf));
  }
  torch::Tensor operator()(const torch::Tensor& x) {
    auto out = torch::matmul(x.to(torch::kHalf), experts_[0]);
    for (size_t e = 1; e < experts_.size(); ++e) out += torch::matmul(x, experts_[e]);  // dtype-lint-expect: DL101
    return out;
  }

 private:
  std::vector<torch::Tensor> experts_;
};

double servingError(const std::vector<torch::Tensor>& experts) {
  HalfServingCopy serving(experts);
  auto x = torch::randn({4, 8});
  return serving(x).to(torch::kFloat).abs().max().item<double>();
}

// Parameters of two members gathered in the constructor into a local list,
// handed to std::make_unique (which copies it into the optimizer).
class GatheredParametersTrainer {
 public:
  GatheredParametersTrainer() {
    frontend_ = torch::nn::Conv1d(torch::nn::Conv1dOptions(1, 4, 3));
    frontend_->to(torch::kHalf);
    encoder_->to(torch::kHalf);
    std::vector<torch::Tensor> params = frontend_->parameters();
    for (auto& p : encoder_->parameters()) params.push_back(p);
    optimizer_ = std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-3));  // dtype-lint-expect: DL304
    tuned_ = std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-3).eps(1e-4));
  }

 private:
  torch::nn::Conv1d frontend_{nullptr};
  torch::nn::Linear encoder_{4, 4};
  std::unique_ptr<torch::optim::Optimizer> optimizer_, tuned_;
};
