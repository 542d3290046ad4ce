// Models and optimizers built by factories, as trainers split them into
// helpers: an optimizer factory returning unique_ptr<Optimizer>, a model
// factory converting under an enum setting parsed from a string by a helper
// whose own comparisons would otherwise use up the configurations.
#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/grad_scaler.h"

enum class Precision { FP32, FP16 };

Precision parse_precision(const std::string& s) {
  if (s == "fp32" || s == "float" || s == "single") return Precision::FP32;
  if (s == "fp16" || s == "half") return Precision::FP16;
  throw std::invalid_argument("unknown precision " + s);
}

struct RunFlags {
  Precision precision = Precision::FP32;
  std::string optimizer = "adam";
  std::string schedule = "cosine";
};

RunFlags parse_run_flags(int argc, char** argv) {
  RunFlags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--precision") f.precision = parse_precision(value);
    else if (key == "--optimizer") f.optimizer = value;
    else if (key == "--schedule") f.schedule = value;
  }
  return f;
}

torch::nn::Sequential make_classifier(const RunFlags& f) {
  torch::nn::Sequential model(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 4));
  if (f.precision == Precision::FP16) model->to(torch::kHalf);
  return model;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name, std::vector<torch::Tensor> params) {
  if (name == "adam")
    return std::make_unique<torch::optim::Adam>(std::move(params), torch::optim::AdamOptions(1e-3));  // dtype-lint-expect: DL304:68 {{Adam eps=1e-08 is zero in Half, the dtype of its parameters}}
  return std::make_unique<torch::optim::SGD>(std::move(params), torch::optim::SGDOptions(0.1));
}

double schedule_scale(const std::string& schedule, int step) {
  if (schedule == "cosine") return 0.5;
  if (schedule == "linear") return 1.0 - step / 100.0;
  if (schedule == "constant") return 1.0;
  return 0.1;
}

class FactoryTrainer {
 public:
  explicit FactoryTrainer(const RunFlags& flags) : flags_(flags), model_(make_classifier(flags)) {
    opt_ = make_optimizer(flags_.optimizer, model_->parameters());
  }
  void step(int i) {
    const auto dtype = flags_.precision == Precision::FP16 ? torch::kHalf : torch::kFloat;
    auto logits = model_->forward(torch::randn({8, 16}).to(dtype));
    auto loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), torch::randint(0, 4, {8}));
    scaler_.scale(loss * schedule_scale(flags_.schedule, i)).backward();
    scaler_.step(*opt_);  // dtype-lint-expect: DL202:5 {{'scaler_' unscales the gradients of 'opt_', whose parameters are Half}}
    scaler_.update();
  }

 private:
  RunFlags flags_;
  torch::nn::Sequential model_;
  std::unique_ptr<torch::optim::Optimizer> opt_;
  GradScaler scaler_;
};

// The same factories for a model kept in Float: nothing to report.
class FloatFactoryTrainer {
 public:
  explicit FloatFactoryTrainer(const RunFlags& flags) : model_(torch::nn::Linear(16, 4)) {
    opt_ = make_optimizer(flags.optimizer, model_->parameters());
  }
  void step() {
    auto loss = model_->forward(torch::randn({8, 16})).pow(2).mean();
    scaler_.scale(loss).backward();
    scaler_.step(*opt_);
    scaler_.update();
  }

 private:
  torch::nn::Sequential model_;
  std::unique_ptr<torch::optim::Optimizer> opt_;
  GradScaler scaler_;
};

int main(int argc, char** argv) {
  const RunFlags flags = parse_run_flags(argc, argv);
  FactoryTrainer trainer(flags);
  FloatFactoryTrainer reference(flags);
  for (int i = 0; i < 100; ++i) {
    trainer.step(i);
    reference.step();
  }
}

// A wrapper that owns an optimizer handed over by unique_ptr (`opt_(std::move(opt))`)
// steps it itself: after a scaled backward, that step bypasses the scaler
// (DL208, at the wrapper's call). The clean twin hands the wrapped optimizer to the scaler.
class WarmupOptimizer {
 public:
  WarmupOptimizer(std::unique_ptr<torch::optim::Optimizer> opt, int warmup) : opt_(std::move(opt)), warmup_(warmup) {}
  void zero_grad() { opt_->zero_grad(); }
  void step() {
    ++t_;
    opt_->step();
  }
  void step(GradScaler& scaler) {
    ++t_;
    scaler.step(*opt_);
  }

 private:
  std::unique_ptr<torch::optim::Optimizer> opt_;
  int warmup_;
  int t_ = 0;
};

std::unique_ptr<torch::optim::Optimizer> makeHeadOptimizer(std::vector<torch::Tensor> params) {
  return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.1));
}

void trainThroughAnOptimizerWrapper(bool throughScaler) {
  torch::nn::Linear encoder(8, 8), head(8, 1);
  torch::optim::AdamW encoderOptimizer(encoder->parameters());
  WarmupOptimizer headOptimizer(makeHeadOptimizer(head->parameters()), 100);
  GradScaler scaler;
  for (int step = 0; step < 10; ++step) {
    encoderOptimizer.zero_grad();
    headOptimizer.zero_grad();
    auto loss = head(encoder(torch::randn({4, 8}))).sum();
    scaler.scale(loss).backward();
    scaler.step(encoderOptimizer);
    if (throughScaler) headOptimizer.step(scaler);
    else headOptimizer.step();  // dtype-lint-expect: DL208 {{'opt_'.step() called directly on gradients of a scaled loss}}
    scaler.update();
  }
}
