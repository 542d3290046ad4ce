// Trainers that drive the scaler from places the analysis cannot see into
// (a list of std::function hooks) or that leave an iteration early.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "common/grad_scaler.h"

// update() runs from a step-end hook in a list that callers may extend: the
// scaler's state after the hooks is unknown, so nothing is reported.
class HookedEngine {
 public:
  using StepHook = std::function<void(int64_t step, double loss)>;
  HookedEngine() : model_(torch::nn::Linear(8, 2)) {
    optimizer_ = std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(0.1));
    scaler_ = std::make_shared<GradScaler>();
    hooks_.push_back([this](int64_t, double) { scaler_->update(); });
  }
  void add_hook(StepHook hook) { hooks_.insert(hooks_.begin(), std::move(hook)); }
  void run() {
    for (int64_t step = 0; step < 3; ++step) {
      const double loss = train_step();
      for (auto& hook : hooks_) hook(step, loss);
    }
  }

 private:
  double train_step() {
    optimizer_->zero_grad();
    auto loss = model_->forward(torch::randn({4, 8})).pow(2).mean();
    scaler_->scale(loss).backward();
    scaler_->unscale_(*optimizer_);
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
    scaler_->step(*optimizer_);
    return loss.item<double>();
  }
  torch::nn::Linear model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::shared_ptr<GradScaler> scaler_;
  std::vector<StepHook> hooks_;
};

// On a non-finite norm the iteration leaves after step() without update():
// the cause is reported at that step, not at the next iteration's unscale_().
void skip_update_on_overflow(torch::nn::Linear& model, torch::optim::SGD& optimizer, GradScaler& scaler) {
  for (int it = 0; it < 3; ++it) {
    optimizer.zero_grad();
    scaler.scale(model(torch::randn({4, 8})).pow(2).mean()).backward();
    scaler.unscale_(optimizer);
    const double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(optimizer);  // dtype-lint-expect: DL204:5 {{'scaler'.step('optimizer') without 'scaler'.update() before the next iteration's unscale_()}}
    if (!std::isfinite(norm)) continue;
    scaler.update();
  }
}

// The same shape with update() before the early exit: clean.
void update_then_skip_logging(torch::nn::Linear& model, torch::optim::SGD& optimizer, GradScaler& scaler) {
  for (int it = 0; it < 3; ++it) {
    optimizer.zero_grad();
    scaler.scale(model(torch::randn({4, 8})).pow(2).mean()).backward();
    scaler.unscale_(optimizer);
    const double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(optimizer);
    scaler.update();
    if (!std::isfinite(norm)) continue;
  }
}

int main() {
  HookedEngine engine;
  engine.run();
  torch::nn::Linear model(8, 2);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  GradScaler scaler;
  skip_update_on_overflow(model, optimizer, scaler);
  update_then_skip_logging(model, optimizer, scaler);
}

// An autocast session whose function template runs the forward inside a
// try block (`run([&] { ... })`), instantiated for two lambdas: a statement
// both instantiations share leads to either one's handler, and only this
// instantiation's is in its CFG (set AI p18 crashed the analysis here, and
// this file's other findings were lost with it).
class TrySession {
 public:
  explicit TrySession(c10::optional<at::ScalarType> dtype) : dtype_(dtype) {}

  template <typename F>
  auto run(F&& f) -> decltype(f()) {
    if (!dtype_) return f();
    enter();
    try {
      auto r = f();
      exit();
      return r;
    } catch (...) {
      exit();
      throw;
    }
  }

 private:
  void enter() {
    at::autocast::set_autocast_gpu_dtype(*dtype_);
    at::autocast::set_enabled(true);
  }
  void exit() {
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
  }
  c10::optional<at::ScalarType> dtype_;
};

class TrySessionTrainer {
 public:
  TrySessionTrainer() : amp_(torch::kHalf) {}
  torch::Tensor discriminate(const torch::Tensor& real) {
    auto logits = amp_.run([&] { return torch::cat({d_->forward(real), d_->forward(g_->forward(real))}); });
    return torch::softmax(logits, -1, torch::kFloat);
  }
  torch::Tensor generate(const torch::Tensor& z) {
    auto logits = amp_.run([&] { return d_->forward(g_->forward(z)); });
    return torch::softmax(logits, -1, torch::kFloat);
  }

 private:
  TrySession amp_;
  torch::nn::Linear g_{8, 8}, d_{8, 8};
};
