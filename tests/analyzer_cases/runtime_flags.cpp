// Flags set at run time (a command-line switch copied into a config) choose
// paths: a bug on the path a flag selects is reported, noting the flag's value
// on that path; branches on the same flag agree.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

class GradScaler {
 public:
  torch::Tensor scale(const torch::Tensor& loss) { return loss * scale_; }
  void unscale_(torch::optim::Optimizer& optimizer) {
    for (auto& group : optimizer.param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) p.mutable_grad().mul_(1.0 / scale_);
  }
  void step(torch::optim::Optimizer& optimizer) { optimizer.step(); }
  void update() {}

 private:
  double scale_ = 65536.0;
};

struct RunConfig {
  bool use_amp = false;
  bool half_inputs = false;
  double max_norm = 1.0;
  int64_t features = 16;
};

RunConfig parse(int argc, char** argv) {
  RunConfig cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    cfg.use_amp = cfg.use_amp || arg == "--amp";
    cfg.half_inputs = cfg.half_inputs || arg == "--half-inputs";
  }
  return cfg;
}

// The scaler block under the flag clips before unscaling.
class ClippingTrainer {
 public:
  explicit ClippingTrainer(const RunConfig& cfg)
      : cfg_(cfg), model_(torch::nn::Linear(cfg.features, 1)), opt_(model_->parameters(), 0.01) {}

  void step(const torch::Tensor& x, const torch::Tensor& y) {
    opt_.zero_grad();
    auto loss = torch::mse_loss(model_(x), y);
    if (cfg_.use_amp) {
      scaler_.scale(loss).backward();
      torch::nn::utils::clip_grad_norm_(model_->parameters(), cfg_.max_norm);  // dtype-lint-expect: DL205:7 {{gradients clipped while they hold the scaled loss's gradients}}
      scaler_.step(opt_);
      scaler_.update();
    } else {
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model_->parameters(), cfg_.max_norm);
      opt_.step();
    }
  }

 private:
  RunConfig cfg_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
  GradScaler scaler_;
};

// Branches on one flag in two methods agree: unscaled before the clip, and a
// direct step only on the path without the scaler.
class CorrelatedTrainer {
 public:
  explicit CorrelatedTrainer(const RunConfig& cfg)
      : cfg_(cfg), model_(torch::nn::Linear(cfg.features, 1)), opt_(model_->parameters(), 0.01) {}

  void step(const torch::Tensor& x, const torch::Tensor& y) {
    opt_.zero_grad();
    backward(torch::mse_loss(model_(x), y));
    torch::nn::utils::clip_grad_norm_(model_->parameters(), cfg_.max_norm);
    apply();
  }

 private:
  void backward(const torch::Tensor& loss) {
    if (cfg_.use_amp) {
      scaler_.scale(loss).backward();
      scaler_.unscale_(opt_);
    } else {
      loss.backward();
    }
  }
  void apply() {
    if (cfg_.use_amp) {
      scaler_.step(opt_);
      scaler_.update();
    } else {
      opt_.step();
    }
  }

  RunConfig cfg_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
  GradScaler scaler_;
};

// Half inputs under a flag meet the Float layer; the cast of both sides under
// the same flag is fine.
class Probe {
 public:
  explicit Probe(const RunConfig& cfg) : cfg_(cfg), weight_(torch::randn({cfg.features, 4})) {}

  torch::Tensor scores(torch::Tensor x) {
    if (cfg_.half_inputs) x = x.to(torch::kHalf);
    return torch::mm(x, weight_);  // dtype-lint-expect: DL101:12 {{'mm' on operands of different dtypes outside autocast ('x': Half, 'weight_': Float)}}
  }
  torch::Tensor matched_scores(torch::Tensor x) {
    auto w = weight_;
    if (cfg_.half_inputs) {
      x = x.to(torch::kHalf);
      w = w.to(torch::kHalf);
    }
    return torch::mm(x, w);
  }

 private:
  RunConfig cfg_;
  torch::Tensor weight_;
};

int main(int argc, char** argv) {
  const RunConfig cfg = parse(argc, argv);
  auto x = torch::randn({8, cfg.features});
  auto y = torch::randn({8, 1});
  ClippingTrainer(cfg).step(x, y);
  CorrelatedTrainer(cfg).step(x, y);
  Probe probe(cfg);
  return probe.scores(x).numel() + probe.matched_scores(x).numel() > 0 ? 0 : 1;
}

// The scaler exists only when the flag is set, and the step tests the pointer.
class OptionalScalerTrainer {
 public:
  explicit OptionalScalerTrainer(const RunConfig& cfg)
      : cfg_(cfg), model_(torch::nn::Linear(cfg.features, 1)), opt_(model_->parameters(), 0.01) {
    if (cfg_.use_amp) scaler_ = std::make_unique<GradScaler>();
  }

  void step(const torch::Tensor& x, const torch::Tensor& y) {
    opt_.zero_grad();
    auto loss = torch::mse_loss(model_(x), y);
    if (scaler_) {
      scaler_->scale(loss).backward();
      opt_.step();  // dtype-lint-expect: DL208:7 {{'opt_'.step() called directly on gradients of a scaled loss}}
      scaler_->update();  // dtype-lint-expect: DL210 (no scaler step recorded an inf check)
    } else {
      loss.backward();
      opt_.step();
    }
  }

 private:
  RunConfig cfg_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
  std::unique_ptr<GradScaler> scaler_;
};

void train_with_optional_scaler(int argc, char** argv) {
  OptionalScalerTrainer trainer(parse(argc, argv));
  trainer.step(torch::randn({8, 16}), torch::randn({8, 1}));
}

// A hand-written autocast guard that does nothing when its flag is off: after
// its scope autocast is off whatever the flag, so evaluation runs without it.
struct AmpGuard {
  bool active;
  explicit AmpGuard(bool enable) : active(enable) {
    if (!active) return;
    at::autocast::set_enabled(true);
  }
  ~AmpGuard() {
    if (!active) return;
    at::autocast::clear_cache();
    at::autocast::set_enabled(false);
  }
};

class GuardedClassifier {
 public:
  explicit GuardedClassifier(const RunConfig& cfg) : cfg_(cfg), head_(torch::nn::Linear(cfg.features, 2)) {}

  torch::Tensor train_logits(const torch::Tensor& x) {
    AmpGuard amp(cfg_.use_amp);
    return head_(x);
  }
  torch::Tensor eval_logits(const torch::Tensor& x) {
    return head_(x.to(torch::kHalf));  // dtype-lint-expect: DL101
  }
  void epoch(const torch::Tensor& x) {
    auto train = train_logits(x);
    auto eval = eval_logits(x);
  }

 private:
  RunConfig cfg_;
  torch::nn::Linear head_;
};

// A guard built from the flag picks Half with it and BFloat16 without; the
// scaler exists only with it. The guard's member and the pointer test follow
// the flag, so no path scales a BFloat16 loss.
class PrecisionRegion {
 public:
  explicit PrecisionRegion(bool half) : half_(half) {
    if (half_) {
      at::autocast::set_autocast_gpu_dtype(at::kHalf);
      at::autocast::set_enabled(true);
    } else {
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::set_cpu_enabled(true);
    }
  }
  ~PrecisionRegion() {
    if (half_) at::autocast::set_enabled(false);
    else at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }

 private:
  bool half_;
};

class RegionTrainer {
 public:
  explicit RegionTrainer(const RunConfig& cfg)
      : cfg_(cfg), model_(torch::nn::Linear(cfg.features, 1)), opt_(model_->parameters(), 0.01) {
    if (cfg_.use_amp) scaler_ = std::make_unique<GradScaler>();
  }
  void step(const torch::Tensor& x, const torch::Tensor& y) {
    opt_.zero_grad();
    torch::Tensor loss;
    {
      PrecisionRegion region(cfg_.use_amp);
      loss = torch::mse_loss(model_(x).to(torch::kFloat), y);
    }
    if (!scaler_) {
      loss.backward();
      opt_.step();
      return;
    }
    scaler_->scale(loss).backward();
    scaler_->step(opt_);
    scaler_->update();
  }

 private:
  std::unique_ptr<GradScaler> scaler_;
  RunConfig cfg_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
};

void train_in_a_flagged_region(int argc, char** argv) {
  RegionTrainer trainer(parse(argc, argv));
  trainer.step(torch::randn({8, 16}), torch::randn({8, 1}));
}

// Switches parsed into a config with constant writes (`cfg.bf16 = true`) are
// settings chosen once per run, like the ones above; a state its own class
// sets (`warmed_up_ = true`) is not.
struct SwitchConfig {
  bool amp = true;
  bool bf16 = false;
  bool lookahead = false;
};

SwitchConfig parse_switches(int argc, char** argv) {
  SwitchConfig cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-amp") cfg.amp = false;
    if (arg == "--bf16") cfg.bf16 = true;
    if (arg == "--lookahead") cfg.lookahead = true;
  }
  return cfg;
}

class SwitchedTrainer {
 public:
  explicit SwitchedTrainer(const SwitchConfig& cfg)
      : cfg_(cfg), model_(torch::nn::Linear(16, 1)), opt_(model_->parameters(), 0.01) {}

  void step(const torch::Tensor& x, const torch::Tensor& y) {
    opt_.zero_grad();
    at::autocast::set_autocast_gpu_dtype(cfg_.bf16 ? at::kBFloat16 : at::kHalf);
    at::autocast::set_enabled(cfg_.amp);
    auto loss = torch::mse_loss(model_(x).to(torch::kFloat), y);
    auto scaled = scaler_.scale(loss);  // dtype-lint-expect: DL209 (with --bf16 and amp on)
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
    scaled.backward();
    if (cfg_.lookahead) {
      opt_.step();  // dtype-lint-expect: DL208
    } else {
      scaler_.step(opt_);
    }
    scaler_.update();  // dtype-lint-expect: DL210 (with --lookahead)
    if (!warmed_up_) {
      warmed_up_ = true;
      opt_.zero_grad();
    }
  }

 private:
  SwitchConfig cfg_;
  torch::nn::Linear model_;
  torch::optim::SGD opt_;
  GradScaler scaler_;
  bool warmed_up_ = false;
};

void train_with_switches(int argc, char** argv) {
  SwitchedTrainer trainer(parse_switches(argc, argv));
  for (int i = 0; i < 3; ++i) trainer.step(torch::randn({8, 16}), torch::randn({8, 1}));
}

// A class template's std::optional scaler, made in the constructor only for
// one value of an enum setting; every use tests it, so no path unscales
// twice (the unscale and the step/update test the same optional).
enum class LoopPrecision { FP32, FP16, BF16 };

struct LoopConfig {
  LoopPrecision precision = LoopPrecision::FP32;
};

LoopConfig parse_loop(int argc, char** argv) {
  LoopConfig cfg;
  if (argc > 1 && std::string(argv[1]) == "fp16") cfg.precision = LoopPrecision::FP16;
  if (argc > 1 && std::string(argv[1]) == "bf16") cfg.precision = LoopPrecision::BF16;
  return cfg;
}

template <typename Model>
class AccumulatingTrainer {
 public:
  AccumulatingTrainer(const LoopConfig& cfg, Model model)
      : cfg_(cfg), model_(std::move(model)), opt_(model_->parameters(), 0.01) {
    if (cfg.precision == LoopPrecision::FP16) scaler_.emplace();
  }
  void train() {
    for (int step = 0; step < 10; ++step) {
      for (int k = 0; k < 4; ++k) {
        auto loss = model_(torch::randn({8, 16})).pow(2).mean();
        if (scaler_) scaler_->scale(loss).backward();
        else loss.backward();
      }
      if (scaler_) scaler_->unscale_(opt_);
      torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
      if (scaler_.has_value()) {
        scaler_->step(opt_);
        scaler_->update();
      } else {
        opt_.step();
      }
      opt_.zero_grad();
    }
  }

 private:
  LoopConfig cfg_;
  Model model_;
  torch::optim::SGD opt_;
  std::optional<GradScaler> scaler_;
};

void train_accumulating(int argc, char** argv) {
  AccumulatingTrainer<torch::nn::Linear> trainer(parse_loop(argc, argv), torch::nn::Linear(16, 1));
  trainer.train();
}

// A switch read by a helper whose test the analysis cannot see into: the
// local it initializes is the flag.
static bool env_switch(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  return value ? value[0] == '1' : fallback;
}

void process_wide_autocast_from_environment() {
  const bool amp = env_switch("USE_AMP", true);
  torch::nn::Linear net(4, 4);
  torch::optim::SGD opt(net->parameters(), 0.1);
  if (amp) at::autocast::set_cpu_enabled(true);
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    net(torch::randn({4, 4})).to(torch::kFloat).sum().backward();
    opt.step();  // dtype-lint-expect: DL107 (with amp true)
  }
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

// Autocast only where the run has a GPU (`use_amp && device.is_cuda()`): the
// machine is a setting of the run too.
void autocast_where_there_is_a_gpu(int argc, char** argv) {
  const RunConfig cfg = parse(argc, argv);
  const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  const bool amp = cfg.use_amp && device.is_cuda();
  torch::nn::Linear net(4, 4);
  torch::optim::SGD opt(net->parameters(), 0.1);
  at::autocast::set_enabled(amp);
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    net(torch::randn({4, 4}, device)).to(torch::kFloat).sum().backward();
    opt.step();  // dtype-lint-expect: DL107 (with CUDA and use_amp true)
  }
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
}

// Clean: `torch::cuda::is_available()` and `device.is_cuda()` are one flag,
// so no configuration enables the region on a GPU and leaves it on a CPU.
void gpu_region_left_before_each_step() {
  const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::nn::Linear net(4, 4);
  torch::optim::SGD opt(net->parameters(), 0.1);
  if (device.is_cuda()) at::autocast::set_enabled(true);
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    net(torch::randn({4, 4}, device)).to(torch::kFloat).sum().backward();
    if (torch::cuda::is_available()) {
      at::autocast::set_enabled(false);
      at::autocast::clear_cache();
    }
    opt.step();
    if (device.is_cuda()) at::autocast::set_enabled(true);
  }
}

// A dtype member chosen in the constructor's body by a flag
// (`enc_dtype_ = cfg.half_inputs ? kHalf : kFloat;`): read in forward, it is
// the dtype the flag's value on this path chooses.
class TwoStageClassifier : public torch::nn::Module {
 public:
  explicit TwoStageClassifier(const RunConfig& cfg) {
    encoder_ = register_module("encoder", torch::nn::Linear(cfg.features, cfg.features));
    head_ = register_module("head", torch::nn::Linear(cfg.features, 2));
    enc_dtype_ = cfg.half_inputs ? torch::kHalf : torch::kFloat;
    if (cfg.half_inputs) encoder_->to(torch::kHalf);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor features = encoder_(x.to(enc_dtype_));
    return head_(features);  // dtype-lint-expect: DL101 (with half_inputs true)
  }

 private:
  torch::ScalarType enc_dtype_ = torch::kFloat;
  torch::nn::Linear encoder_{nullptr}, head_{nullptr};
};

void classify_in_two_stages(int argc, char** argv) {
  const RunConfig cfg = parse(argc, argv);
  auto model = std::make_shared<TwoStageClassifier>(cfg);
  model->forward(torch::randn({2, cfg.features}));
}

// Clean: the same choice, with the features brought back to Float before the head.
class TwoStageClassifierUpcast : public torch::nn::Module {
 public:
  explicit TwoStageClassifierUpcast(const RunConfig& cfg) {
    encoder_ = register_module("encoder", torch::nn::Linear(cfg.features, cfg.features));
    head_ = register_module("head", torch::nn::Linear(cfg.features, 2));
    enc_dtype_ = cfg.half_inputs ? torch::kHalf : torch::kFloat;
    if (cfg.half_inputs) encoder_->to(torch::kHalf);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor features = encoder_(x.to(enc_dtype_));
    return head_(features.to(torch::kFloat));
  }

 private:
  torch::ScalarType enc_dtype_ = torch::kFloat;
  torch::nn::Linear encoder_{nullptr}, head_{nullptr};
};

void classify_in_two_stages_upcast(int argc, char** argv) {
  const RunConfig cfg = parse(argc, argv);
  auto model = std::make_shared<TwoStageClassifierUpcast>(cfg);
  model->forward(torch::randn({2, cfg.features}));
}

// A scaler made only when the autocast dtype a setting chooses is Half: under
// BFloat16 autocast it does not exist, and nothing scales a BFloat16 loss.
static torch::ScalarType autocast_dtype_named(const std::string& name) {
  return name == "fp16" ? torch::kHalf : torch::kBFloat16;
}

void scaler_made_only_for_half_autocast() {
  const char* env = std::getenv("AMP_DTYPE");
  const torch::ScalarType amp_dtype = autocast_dtype_named(env ? env : "bf16");
  torch::nn::Linear net(8, 8);
  torch::optim::SGD opt(net->parameters(), 0.1);
  std::optional<GradScaler> scaler;
  if (amp_dtype == torch::kHalf) scaler.emplace();
  at::autocast::set_autocast_cpu_dtype(amp_dtype);
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    at::autocast::set_cpu_enabled(true);
    auto loss = net(torch::randn({4, 8})).to(torch::kFloat).pow(2).mean();
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    if (scaler) {
      scaler->scale(loss).backward();
      scaler->step(opt);
      scaler->update();
    } else {
      loss.backward();
      opt.step();
    }
  }
}

// A warm-up that backpropagates the unscaled loss, then one step for both
// paths: the local flag is the fourth a root's paths test (after two switches
// and a precision read from the environment), and on its path the scaler
// divides gradients nobody multiplied.
class WarmupTrainer {
 public:
  WarmupTrainer(const RunConfig& cfg, const std::string& precision) : cfg_(cfg), precision_(precision) {}
  void step(int64_t it, int64_t warmup_steps) {
    const bool warming_up = it < warmup_steps;
    opt_.zero_grad();
    const int64_t rows = cfg_.half_inputs ? 2 : 4;
    if (precision_ == "bf16" || precision_ == "fp16") at::autocast::set_autocast_gpu_dtype(torch::kHalf);
    at::autocast::set_enabled(cfg_.use_amp && !warming_up);
    auto loss = net_(torch::randn({rows, 8})).to(torch::kFloat).pow(2).mean();
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
    if (warming_up) {
      loss.backward();
    } else {
      scaler_.scale(loss).backward();
    }
    scaler_.step(opt_);  // dtype-lint-expect: DL207 {{this iteration's backward() ran on the unscaled loss}}
    scaler_.update();
  }

 private:
  RunConfig cfg_;
  std::string precision_;
  torch::nn::Linear net_{8, 8};
  torch::optim::SGD opt_{net_->parameters(), 0.1};
  GradScaler scaler_;
};

void train_with_a_warmup(int argc, char** argv) {
  const char* precision = std::getenv("PRECISION");
  WarmupTrainer trainer(parse(argc, argv), precision ? precision : "fp32");
  for (int64_t it = 0; it < 100; ++it) trainer.step(it, 10);
}
