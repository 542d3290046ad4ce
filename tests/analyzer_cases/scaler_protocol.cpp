// The gradient-scaler protocol (DL201-DL210), manual scaling (DL203) and
// Adam's eps on Half parameters (DL304).
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <optional>

#include "../../samples/common/grad_scaler.h"

torch::Tensor loss_of(torch::nn::Linear& model) { return model(torch::randn({4, 8})).pow(2).mean(); }

void correct_loop() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(opt);
    scaler.update();
  }
}

void unscale_in_accumulation_loop() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int micro = 0; micro < 4; ++micro) {
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);  // dtype-lint-expect: DL201:5 {{gradients of 'opt' unscaled again before 'scaler'.update()}}
  }
  scaler.step(opt);
  scaler.update();
}

void unscale_and_clip(GradScaler& s, torch::optim::Optimizer& o, torch::nn::Linear& m) {
  s.unscale_(o);
  torch::nn::utils::clip_grad_norm_(m->parameters(), 1.0);
}

void double_unscale_through_helper() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  scaler.unscale_(opt);
  unscale_and_clip(scaler, opt, model);  // dtype-lint-expect: DL201
  scaler.step(opt);
  scaler.update();
}

void two_optimizers_one_scaler() {
  torch::nn::Linear encoder(8, 8), head(8, 1);
  torch::optim::SGD opt_encoder(encoder->parameters(), 0.1);
  torch::optim::Adam opt_head(head->parameters());
  GradScaler scaler;
  for (int i = 0; i < 2; ++i) {
    scaler.scale(head(encoder(torch::randn({4, 8}))).sum()).backward();
    scaler.unscale_(opt_encoder);
    scaler.unscale_(opt_head);
    scaler.step(opt_encoder);
    scaler.step(opt_head);
    scaler.update();
  }
}

void half_model_with_scaler() {
  torch::nn::Linear model(8, 1);
  model->to(torch::kHalf);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(model(torch::randn({4, 8}, torch::kHalf)).to(torch::kFloat).sum()).backward();
  scaler.step(opt);  // dtype-lint-expect: DL202:3 {{'scaler' unscales the gradients of 'opt', whose parameters are Half}}
  scaler.update();
}

void adam_on_half_parameters() {
  torch::nn::Linear model(8, 1);
  model->to(torch::kHalf);
  torch::optim::Adam adam(model->parameters());  // dtype-lint-expect: DL304:3 {{Adam 'adam' eps=1e-08 is zero in Half, the dtype of its parameters}}
  torch::optim::Adam safe(model->parameters(), torch::optim::AdamOptions(1e-3).eps(1e-4));
  torch::nn::Linear full(8, 1);
  torch::optim::AdamW float_adam(full->parameters(), torch::optim::AdamWOptions(1e-3).eps(1e-8));
  // An eps written out is reported where it is written.
  torch::optim::Adam written(model->parameters(),
                             torch::optim::AdamOptions(1e-3).eps(1e-8));  // dtype-lint-expect: DL304
  // A default eps is reported at the options it defaults in, where the fix adds it.
  torch::optim::Adam defaulted(model->parameters(),
                               torch::optim::AdamOptions(1e-3).betas({0.9, 0.98}));  // dtype-lint-expect: DL304
  // A bare learning rate is options written nowhere: reported at the construction.
  torch::optim::Adam bare_lr(model->parameters(),  // dtype-lint-expect: DL304
                             1e-3);
}

void step_without_update(bool skip) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int i = 0; i < 3; ++i) {
    scaler.scale(loss_of(model)).backward();
    scaler.step(opt);  // dtype-lint-expect: DL204:5 {{'scaler'.step('opt') reached again without 'scaler'.update() since the previous step()}}
    if (skip) continue;
    scaler.update();
  }
}

void clip_before_unscale() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);  // dtype-lint-expect: DL205:3 {{gradients clipped while they hold the scaled loss's gradients}}
  scaler.step(opt);
  scaler.update();
}

// Gradient accumulation: the loop might run zero times, but that path clips no gradients.
void clip_after_accumulation(int accum) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  opt.zero_grad();
  for (int m = 0; m < accum; ++m) scaler.scale(loss_of(model)).backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);  // dtype-lint-expect: DL205
  scaler.step(opt);
  scaler.update();
}

void unscale_after_step() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  scaler.step(opt);
  scaler.unscale_(opt);  // dtype-lint-expect: DL206:3 {{unscale_() of 'opt' after 'scaler'.step() and before update(): PyTorch raises 'unscale_() is being called after step().'}}
  scaler.update();
}

void step_without_scaled_backward() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  auto loss = loss_of(model);
  loss.backward();
  scaler.step(opt);  // dtype-lint-expect: DL207:3 {{'scaler'.step('opt') but this iteration's backward() ran on the unscaled loss}}
  scaler.update();
}

void optimizer_step_bypasses_scaler() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  opt.step();  // dtype-lint-expect: DL208:3 {{'opt'.step() called directly on gradients of a scaled loss}}
  scaler.update();  // dtype-lint-expect: DL210:3 {{'scaler'.update() with no step() since the scaler was created}}
}

void manual_unscale_then_direct_step_is_fine() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  scaler.unscale_(opt);
  opt.step();
}

void scaler_under_bfloat16_autocast() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  at::autocast::set_cpu_enabled(true);
  auto loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(true);
  auto scaled = scaler.scale(loss);  // dtype-lint-expect: DL209 {{'scaler' unscales the gradients of a loss computed under BFloat16 autocast: BFloat16 has Float's range and needs no loss scaling}}
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  scaled.backward();
  scaler.step(opt);
  scaler.update();
}

namespace toggled {
// A scaler whose constructor takes `enabled`, as torch.amp.GradScaler's does.
class GradScaler {
 public:
  explicit GradScaler(double init_scale = 65536.0, bool enabled = true) : scale_(init_scale), enabled_(enabled) {}
  torch::Tensor scale(const torch::Tensor& loss) { return enabled_ ? loss * scale_ : loss; }
  void unscale_(torch::optim::Optimizer& optimizer) {}
  void step(torch::optim::Optimizer& optimizer) { optimizer.step(); }
  void update() {}

 private:
  double scale_;
  bool enabled_;
};
}  // namespace toggled

// Enabled only for Half, as the program chooses at run time: off under BFloat16.
void scaler_enabled_for_half_only(bool half) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  toggled::GradScaler scaler(65536.0, half);
  at::autocast::set_autocast_cpu_dtype(half ? at::kHalf : at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  scaler.scale(loss).backward();
  scaler.step(opt);
  scaler.update();
}

// Enabled by the flag that also picks BFloat16: on that path the scaler is on.
void scaler_enabled_with_bfloat16(bool bf16) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  toggled::GradScaler scaler(65536.0, bf16);
  if (bf16) at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  scaler.scale(loss).backward();  // dtype-lint-expect: DL209 (with bf16 true)
  scaler.step(opt);
  scaler.update();
}

void scaler_enabled_explicitly_under_bfloat16() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  toggled::GradScaler scaler(65536.0, true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  scaler.scale(loss).backward();  // dtype-lint-expect: DL209
  scaler.step(opt);
  scaler.update();
}

// A guard that takes the autocast dtype as an argument: the loss scaled
// after its scope was computed in BFloat16; with Half the scaler is needed.
struct AutocastScope {
  AutocastScope(bool enabled, at::ScalarType dtype) : enabled_(enabled) {
    if (!enabled_) return;
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
  ~AutocastScope() {
    if (!enabled_) return;
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
  bool enabled_;
};

void scaler_after_a_bfloat16_scope(bool amp) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  torch::Tensor loss;
  {
    AutocastScope scope(true, at::kBFloat16);
    loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  }
  scaler.scale(loss).backward();  // dtype-lint-expect: DL209
  scaler.step(opt);
  scaler.update();
  {
    AutocastScope scope(amp, at::kHalf);
    loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
  }
  scaler.scale(loss).backward();
  scaler.step(opt);
  scaler.update();
}

void double_update() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  scaler.step(opt);
  scaler.update();
  scaler.update();  // dtype-lint-expect: DL210
}

void manual_scaling_large_constant() {
  torch::nn::Linear model(8, 1);
  auto loss = loss_of(model);
  (loss * 1024.0).backward();  // dtype-lint-expect: DL203:3 {{backward() on a loss multiplied by 1024 by hand}}
  auto weighted = loss_of(model) * 0.5;  // a loss weight, not scaling
  weighted.backward();
}

void manual_scaling_divided_back(float loss_weight) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  float loss_scale = 512.0f;
  loss_scale = loss_scale * 2;
  auto scaled = loss_of(model) * loss_scale;
  scaled.backward();  // dtype-lint-expect: DL203
  for (auto& p : model->parameters()) p.mutable_grad().div_(loss_scale);
  opt.step();
  auto weighted = loss_of(model) * loss_weight;
  weighted.backward();
  opt.step();
}

// Scaled, divided back, and checked for inf/NaN with a backoff: a hand-written
// dynamic scaler, not DL203 (the runtime hooks agree).
void manual_scaling_with_an_inf_check() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  double loss_scale = 65536.0;
  for (int step = 0; step < 4; ++step) {
    (loss_of(model) * loss_scale).backward();
    bool finite = true;
    for (auto& p : model->parameters()) finite = finite && torch::isfinite(p.grad()).all().item<bool>();
    if (!finite) {
      loss_scale /= 2;
      continue;
    }
    for (auto& p : model->parameters()) p.mutable_grad().div_(loss_scale);
    opt.step();
  }
}

// The same check in a helper of the trainer's own.
bool gradients_are_finite(torch::nn::Linear& model) {
  for (const auto& p : model->parameters())
    if (p.grad().defined() && !torch::isfinite(p.grad()).all().item<bool>()) return false;
  return true;
}

void manual_scaling_with_an_inf_check_in_a_helper() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  double loss_scale = 65536.0;
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    (loss_of(model) * loss_scale).backward();
    if (!gradients_are_finite(model)) {
      loss_scale /= 2;
      continue;
    }
    for (auto& p : model->parameters()) p.mutable_grad().div_(loss_scale);
    opt.step();
  }
}

void loss_scaled_inside_scaler() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model) * 256).backward();  // dtype-lint-expect: DL203
  scaler.step(opt);
  scaler.update();
  scaler.scale(loss_of(model) * 0.5).backward();  // a weight: silent
  scaler.step(opt);
  scaler.update();
}

// A static scale from a config that no code changes, with an inf skip: the
// scale never adapts, whatever the skip.
struct StaticScaleConfig {
  float static_loss_scale = 512.0f;
};

void manual_scaling_fixed_scale_with_an_inf_skip(const StaticScaleConfig& cfg) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  (loss_of(model) * cfg.static_loss_scale).backward();  // dtype-lint-expect: DL203
  bool finite = true;
  for (auto& p : model->parameters()) {
    p.mutable_grad().div_(cfg.static_loss_scale);
    finite = finite && torch::isfinite(p.grad()).all().item<bool>();
  }
  if (finite) opt.step();
}

// Optimizers reached through a container cannot be told apart: their steps
// still count for the scaler, and the loop is judged on its fixpoint.
void step_all(GradScaler& scaler, std::vector<torch::optim::Optimizer*>& optimizers) {
  for (auto* optimizer : optimizers) scaler.step(*optimizer);
  scaler.update();
}

void optimizers_in_a_container() {
  torch::nn::Linear a(8, 1), b(8, 1);
  torch::optim::SGD first(a->parameters(), 0.1), second(b->parameters(), 0.1);
  std::vector<torch::optim::Optimizer*> optimizers{&first, &second};
  GradScaler scaler;
  for (int i = 0; i < 2; ++i) {
    scaler.scale(loss_of(a) + loss_of(b)).backward();
    step_all(scaler, optimizers);
  }
}

// The same optimizers unscaled in a loop, then clipped: which gradients the
// unscales reached is not known, so the clip is not reported.
void clip_after_unscaling_a_container() {
  torch::nn::Linear a(8, 1), b(8, 1);
  torch::optim::SGD first(a->parameters(), 0.1), second(b->parameters(), 0.1);
  std::vector<torch::optim::Optimizer*> optimizers{&first, &second};
  GradScaler scaler;
  for (int i = 0; i < 2; ++i) {
    for (auto* optimizer : optimizers) optimizer->zero_grad();
    scaler.scale(loss_of(a) + loss_of(b)).backward();
    for (auto* optimizer : optimizers) scaler.unscale_(*optimizer);
    torch::nn::utils::clip_grad_norm_(a->parameters(), 1.0);
    for (auto* optimizer : optimizers) scaler.step(*optimizer);
    scaler.update();
  }
}

// An optimizer over parameters gathered in a loop from a model made Half:
// the vector's elements are Half once the loop has filled it.
void gathered_half_parameters() {
  torch::nn::Linear model(8, 1);
  model->to(torch::kHalf);
  std::vector<torch::Tensor> params;
  for (auto& named : model->named_parameters())
    if (named.value().requires_grad()) params.push_back(named.value());
  torch::optim::SGD opt(params, 0.1);
  GradScaler scaler;
  for (int i = 0; i < 2; ++i) {
    opt.zero_grad();
    scaler.scale(model(torch::randn({4, 8}, torch::kHalf)).to(torch::kFloat).pow(2).mean()).backward();
    scaler.step(opt);  // dtype-lint-expect: DL202
    scaler.update();
  }
}

// A micro-batch loop that may run no times still leaves the second
// optimizer stepping on scaled gradients whenever it ran.
void direct_step_after_accumulation(int micro_batches) {
  torch::nn::Linear body(8, 8), head(8, 1);
  torch::optim::SGD opt_body(body->parameters(), 0.1), opt_head(head->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < 2; ++step) {
    opt_body.zero_grad();
    opt_head.zero_grad();
    for (int micro = 0; micro < micro_batches; ++micro)
      scaler.scale(head(body(torch::randn({4, 8}))).pow(2).mean()).backward();
    scaler.step(opt_body);
    opt_head.step();  // dtype-lint-expect: DL208
    scaler.update();
  }
}

// A loss weight inside the scaler's scale() whose gradients are divided back
// by hand: loss scaling by hand on top of the scaler's.
constexpr double kKlBoost = 16.0;

void loss_boosted_inside_scaler_and_divided_back() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < 2; ++step) {
    scaler.scale(loss_of(model) * kKlBoost).backward();  // dtype-lint-expect: DL203
    for (auto& p : model->parameters())
      if (p.grad().defined()) p.grad().div_(kKlBoost);
    scaler.step(opt);
    scaler.update();
  }
}

void loss_weighted_inside_scaler() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model) * kKlBoost).backward();
  scaler.step(opt);
  scaler.update();
}

// A loss module of LibTorch's (CTCLoss, not modeled) called between the
// scaled backward and the clip drives no scaler: the clip is still on scaled
// gradients.
void builtin_loss_module_between_backward_and_clip() {
  torch::nn::Linear model(8, 4);
  torch::optim::SGD opt(model->parameters(), 0.1);
  torch::nn::CTCLoss ctc;
  GradScaler scaler;
  auto targets = torch::randint(1, 4, {2, 3}, torch::kLong);
  auto lengths = torch::full({2}, 6, torch::kLong);
  auto target_lengths = torch::full({2}, 3, torch::kLong);
  scaler.scale(loss_of(model)).backward();
  auto monitored = ctc(torch::log_softmax(model(torch::randn({6, 2, 8})), -1), targets, lengths, target_lengths);
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);  // dtype-lint-expect: DL205
  scaler.step(opt);
  scaler.update();
}

// Optimizers kept in a map by name, unscaled and stepped in loops over it with
// a structured binding: each iteration is another optimizer.
void optimizers_in_a_map_walked_with_bindings() {
  torch::nn::Linear model(8, 1);
  std::map<std::string, std::unique_ptr<torch::optim::Optimizer>> optimizers;
  optimizers["dense"] = std::make_unique<torch::optim::SGD>(model->parameters(), 0.1);
  optimizers["sparse"] = std::make_unique<torch::optim::Adagrad>(model->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  for (auto& [name, opt] : optimizers) scaler.unscale_(*opt);
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  for (auto& [name, opt] : optimizers) scaler.step(*opt);
  scaler.update();
}

// Optimizers held by the elements of a vector, stepped in a loop over it:
// `o.opt` is another optimizer on each iteration, not one stepped twice.
struct NamedOptimizer {
  std::string name;
  std::unique_ptr<torch::optim::Optimizer> opt;
};

void optimizers_held_by_vector_elements(std::vector<NamedOptimizer>& optimizers) {
  torch::nn::Linear model(8, 1);
  GradScaler scaler;
  scaler.scale(loss_of(model)).backward();
  for (auto& o : optimizers) scaler.step(*o.opt);
  scaler.update();
}

// An optimizer kept in a map under a name the code spells, its module's
// gradients clipped before any unscale: the fix's unscale cannot name a keyed
// optimizer, so the finding comes without one (it crashed the analysis once).
void keyed_optimizer_clipped_before_the_unscale() {
  torch::nn::Linear gate(8, 1);
  std::map<std::string, std::unique_ptr<torch::optim::Optimizer>> optimizers;
  optimizers["gate"] = std::make_unique<torch::optim::SGD>(gate->parameters(), 0.1);
  GradScaler scaler;
  scaler.scale(loss_of(gate)).backward();
  torch::nn::utils::clip_grad_norm_(gate->parameters(), 1.0);  // dtype-lint-expect: DL205
  scaler.step(*optimizers["gate"]);
  scaler.update();
}

// Optimizers kept in a map under names the code spells, stepped by name.
struct NamedOptimizersTrainer {
  NamedOptimizersTrainer() {
    optimizers_.emplace("dense", std::make_unique<torch::optim::SGD>(dense_->parameters(), 0.1));
    optimizers_["sparse"] = std::make_unique<torch::optim::SGD>(sparse_->parameters(), 0.1);
  }
  void step_bypassing_the_scaler() {
    scaler_.scale(dense_(sparse_(torch::randn({4, 8}))).sum()).backward();
    scaler_.step(*optimizers_.at("dense"));
    optimizers_.at("sparse")->step();  // dtype-lint-expect: DL208
    scaler_.update();
  }
  void step_through_the_scaler() {
    scaler_.scale(dense_(sparse_(torch::randn({4, 8}))).sum()).backward();
    scaler_.step(*optimizers_.at("dense"));
    scaler_.step(*optimizers_["sparse"]);
    scaler_.update();
  }
  torch::nn::Linear dense_{8, 1}, sparse_{8, 8};
  std::map<std::string, std::unique_ptr<torch::optim::Optimizer>> optimizers_;
  GradScaler scaler_;
};

// update() outside the `if` that steps every N-th micro-batch: the first
// micro-batch that does not step reaches update() with no inf check.
void update_outside_the_accumulation_step(int accum) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(model) / accum).backward();
    if ((it + 1) % accum == 0) {
      scaler.step(opt);
      opt.zero_grad();
    }
    scaler.update();  // dtype-lint-expect: DL210
  }
}

// Warm-up steps the optimizer directly (DL208), and update() follows either way.
void warmup_steps_around_the_scaler(int warmup) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(model)).backward();
    if (it < warmup) {
      opt.step();  // dtype-lint-expect: DL208
    } else {
      scaler.unscale_(opt);
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      scaler.step(opt);
    }
    scaler.update();  // dtype-lint-expect: DL210
  }
}

void update_inside_the_accumulation_step(int accum) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(model) / accum).backward();
    if ((it + 1) % accum == 0) {
      scaler.step(opt);
      scaler.update();
      opt.zero_grad();
    }
  }
}

// Either branch records an inf check: update() is right on both paths.
void unscale_on_one_branch_step_on_both(bool clip) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(model)).backward();
    if (clip) {
      scaler.unscale_(opt);
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    }
    scaler.step(opt);
    scaler.update();
  }
}

// A generator and a discriminator stepped through one scaler in a loop over
// their optimizers, then one update().
void gan_optimizers_stepped_in_a_loop() {
  torch::nn::Linear generator(8, 1), discriminator(8, 1);
  torch::optim::Adam g_opt(generator->parameters(), 1e-4), d_opt(discriminator->parameters(), 1e-4);
  GradScaler scaler;
  std::vector<torch::optim::Optimizer*> optimizers{&g_opt, &d_opt};
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(generator) + loss_of(discriminator)).backward();
    for (torch::optim::Optimizer* o : optimizers) scaler.step(*o);
    scaler.update();
  }
}

// update() inside the loop over the optimizers: the second pass steps
// gradients of a backward before the first update(), which changed the scale.
void update_per_optimizer_in_a_loop() {
  torch::nn::Linear encoder(8, 1), head(8, 1);
  torch::optim::Adam enc_opt(encoder->parameters(), 1e-4), head_opt(head->parameters(), 1e-4);
  GradScaler scaler;
  std::map<std::string, torch::optim::Optimizer*> optimizers{{"encoder", &enc_opt}, {"head", &head_opt}};
  for (int it = 0; it < 8; ++it) {
    scaler.scale(loss_of(encoder) + loss_of(head)).backward();
    for (auto& kv : optimizers) {
      scaler.step(*kv.second);
      scaler.update();  // dtype-lint-expect: DL210 {{'scaler'.update() a second time in one iteration: no backward() since the last update()}}
    }
  }
}

// Two helpers that each unscale, called in one iteration: the second call is
// out of order, not the helper, which is right on its own.
double grad_norm_for_logging(GradScaler& s, torch::optim::Optimizer& o) {
  s.unscale_(o);
  return 0.0;
}

void unscaled_again_by_a_second_helper() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 4; ++it) {
    scaler.scale(loss_of(model)).backward();
    unscale_and_clip(scaler, opt, model);
    grad_norm_for_logging(scaler, opt);  // dtype-lint-expect: DL201 {{gradients of 'opt' unscaled again}}
    scaler.step(opt);
    scaler.update();
  }
}

// A logging lambda that unscales: called after the step it is DL206, at the call.
void logging_lambda_called_after_step(bool log) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  auto grad_stats = [&] {
    scaler.unscale_(opt);
    return 0.0;
  };
  for (int it = 0; it < 4; ++it) {
    scaler.scale(loss_of(model)).backward();
    scaler.step(opt);
    if (log) grad_stats();  // dtype-lint-expect: DL206 {{unscale_() of 'opt' after 'scaler'.step()}}
    scaler.update();
  }
}

void logging_lambda_called_before_step(bool log) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  auto grad_stats = [&] {
    scaler.unscale_(opt);
    return 0.0;
  };
  for (int it = 0; it < 4; ++it) {
    scaler.scale(loss_of(model)).backward();
    if (log) grad_stats();
    scaler.step(opt);
    scaler.update();
  }
}

// Global-norm clipping written by hand: the factor is computed from the
// gradients, then multiplies them in place.
double clip_by_global_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  double sq = 0.0;
  for (const auto& p : params)
    if (p.grad().defined()) sq += p.grad().pow(2).sum().item<double>();
  const double total = std::sqrt(sq);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0)
    for (const auto& p : params)
      if (p.grad().defined()) p.grad().mul_(coef);
  return total;
}

void hand_written_clip_before_unscale() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  const auto params = model->parameters();
  for (int it = 0; it < 4; ++it) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    clip_by_global_norm(params, 1.0);  // dtype-lint-expect: DL205 {{gradients clipped while they hold the scaled loss's gradients}}
    scaler.step(opt);
    scaler.update();
  }
}

void hand_written_clip_after_unscale() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  const auto params = model->parameters();
  for (int it = 0; it < 4; ++it) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);
    clip_by_global_norm(params, 1.0);
    scaler.step(opt);
    scaler.update();
  }
}

// The same clip with the gradients' norms collected in a vector and stacked.
double clip_by_stacked_norms(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> norms;
  for (const auto& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().detach().norm(2));
  const double total = torch::stack(norms).norm(2).item<double>();
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0)
    for (const auto& p : params)
      if (p.grad().defined()) p.grad().detach().mul_(coef);
  return total;
}

void stacked_norm_clip_before_unscale() {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  const auto params = model->parameters();
  for (int it = 0; it < 4; ++it) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    clip_by_stacked_norms(params, 1.0);  // dtype-lint-expect: DL205 {{gradients clipped while they hold the scaled loss's gradients}}
    scaler.step(opt);
    scaler.update();
  }
}

// Gradients multiplied by a factor not computed from them: no clip.
void gradients_multiplied_by_a_fixed_factor(double decay) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 4; ++it) {
    opt.zero_grad();
    scaler.scale(loss_of(model)).backward();
    for (auto& p : model->parameters()) p.grad().mul_(decay);
    scaler.step(opt);
    scaler.update();
  }
}

// One mode scales by hand, another uses the GradScaler: the GradScaler's own
// inf check does not make the hand-scaled mode a dynamic scaler.
void manual_scaling_next_to_a_grad_scaler(bool use_scaler, double static_scale) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int it = 0; it < 4; ++it) {
    opt.zero_grad();
    if (use_scaler) {
      scaler.scale(loss_of(model)).backward();
      scaler.step(opt);
      scaler.update();
    } else {
      (loss_of(model) * static_scale).backward();  // dtype-lint-expect: DL203 {{gradients divided back by hand}}
      for (auto& p : model->parameters()) p.grad().div_(static_scale);
      opt.step();
    }
  }
}

// Optimizers kept in a map of unique_ptrs, set with reset() from a helper
// that returns a raw pointer; one of them stepped around the scaler.
torch::optim::Adam* make_adam(torch::nn::Module& m) { return new torch::optim::Adam(m.parameters(), 1e-4); }

class TwoOptimizerTrainer {
 public:
  TwoOptimizerTrainer() {
    optimizers_["head"].reset(make_adam(*head_));
    optimizers_["body"].reset(make_adam(*body_));
  }
  void train() {
    for (int it = 0; it < 4; ++it) {
      scaler_.scale(loss_of(head_) + loss_of(body_)).backward();
      scaler_.step(*optimizers_.at("head"));
      optimizers_.at("body")->step();  // dtype-lint-expect: DL208 {{'optimizers_.at("body")'.step() called directly on gradients of a scaled loss}}
      scaler_.update();
    }
  }

 private:
  torch::nn::Linear head_{8, 1}, body_{8, 1};
  std::map<std::string, std::unique_ptr<torch::optim::Optimizer>> optimizers_;
  GradScaler scaler_;
};

void train_two_optimizers() { TwoOptimizerTrainer().train(); }

// A check that throws after a misplaced unscale_() ends the program: the
// caller's next call starts from the path that reached update(), not from the
// thrown one.
bool all_finite(torch::nn::Module& m) {
  for (const auto& p : m.parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

struct CheckedStep {
  void step(bool check_finite) {
    scaler.scale(loss_of(model)).backward();
    scaler.unscale_(opt);
    scaler.step(opt);
    if (check_finite) {
      scaler.unscale_(opt);  // dtype-lint-expect: DL206
      if (!all_finite(*model)) throw std::runtime_error("non-finite parameters after step");
    }
    scaler.update();
  }
  torch::nn::Linear model{8, 1};
  torch::optim::SGD opt{model->parameters(), 0.1};
  GradScaler scaler;
};

void throw_ends_the_path(bool check_finite) {
  CheckedStep trainer;
  for (int it = 0; it < 4; ++it) trainer.step(check_finite);
}

// A legacy static loss scale applied on one path only, then the scaler's
// scale(): on that path the loss is scaled twice.
void static_scale_on_one_path(double static_loss_scale) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  torch::Tensor objective = loss_of(model);
  if (static_loss_scale != 1.0) {
    objective = objective * static_loss_scale;  // dtype-lint-expect: DL203 {{multiplied by 'static_loss_scale' inside the scaler's scale()}}
  }
  scaler.scale(objective).backward();
  scaler.step(opt);
  scaler.update();
}

// An optimizer over an encoder frozen when a setting says so gets no
// gradients: the scaler's step of it raises (DL207). Frozen after the
// optimizer is built, or stepped only when unfrozen: clean.
class ProbeTrainer {
 public:
  explicit ProbeTrainer(bool freeze_encoder) {
    if (freeze_encoder)
      for (auto& p : encoder_->parameters()) p.requires_grad_(false);
    encoder_opt_ = std::make_unique<torch::optim::AdamW>(encoder_->parameters(), torch::optim::AdamWOptions(1e-5));
    head_opt_ = std::make_unique<torch::optim::AdamW>(head_->parameters(), torch::optim::AdamWOptions(1e-3));
  }
  void step(const torch::Tensor& x) {
    encoder_opt_->zero_grad();
    head_opt_->zero_grad();
    scaler_.scale(head_(encoder_(x)).pow(2).mean()).backward();
    scaler_.step(*encoder_opt_);  // dtype-lint-expect: DL207 {{none of the parameters of 'encoder_opt_' has a gradient}}
    scaler_.step(*head_opt_);
    scaler_.update();
  }

 private:
  torch::nn::Linear encoder_{8, 8}, head_{8, 1};
  std::unique_ptr<torch::optim::AdamW> encoder_opt_, head_opt_;
  GradScaler scaler_;
};

void probe(bool freeze) { ProbeTrainer(freeze).step(torch::randn({4, 8})); }

void frozen_head_stepped_only_when_trained(bool train_encoder) {
  torch::nn::Linear encoder(8, 8), head(8, 1);
  torch::optim::SGD head_opt(head->parameters(), 0.1);
  std::optional<torch::optim::SGD> encoder_opt;
  if (train_encoder) encoder_opt.emplace(encoder->parameters(), 0.1);
  for (auto& p : encoder->parameters()) p.set_requires_grad(train_encoder);
  GradScaler scaler;
  scaler.scale(head(encoder(torch::randn({4, 8}))).sum()).backward();
  if (encoder_opt) scaler.step(*encoder_opt);
  scaler.step(head_opt);
  scaler.update();
}

// A helper that unscales and clips, called once per micro-batch: its unscale
// ran in the call before, so the call is reported, the unscale a note.
void unscale_then_clip(GradScaler& scaler, torch::optim::Optimizer& opt) {
  scaler.unscale_(opt);
  for (auto& group : opt.param_groups()) torch::nn::utils::clip_grad_norm_(group.params(), 1.0);
}

void helper_per_micro_batch(int accum) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int micro = 0; micro < accum; ++micro) {
    scaler.scale(loss_of(model)).backward();
    unscale_then_clip(scaler, opt);  // dtype-lint-expect: DL201
  }
  scaler.step(opt);
  scaler.update();
}

// A warm-up that skips loss scaling on some iterations, then one step for
// both: on the warm-up path the scaler divides unscaled gradients (set AG p08).
void warmup_without_scaling(int steps, int warmup) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    auto loss = loss_of(model);
    if (step < warmup)
      loss.backward();
    else
      scaler.scale(loss).backward();
    scaler.step(opt);  // dtype-lint-expect: DL207 {{but on one branch of this iteration backward() ran on the unscaled loss}}
    scaler.update();
  }
}

// The clean look-alike: the same test chooses the step too.
void warmup_with_its_own_step(int steps, int warmup) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    auto loss = loss_of(model);
    if (step < warmup)
      loss.backward();
    else
      scaler.scale(loss).backward();
    if (step < warmup) {
      opt.step();
    } else {
      scaler.step(opt);
      scaler.update();
    }
  }
}

// Linear probing, then fine-tuning: the backbone is frozen on the epochs
// before `unfreeze_epoch`, after its optimizer was built, and the scaler
// steps that optimizer on every epoch (set AG p16).
class ProbeThenTune {
 public:
  explicit ProbeThenTune(int unfreeze_epoch)
      : unfreeze_epoch_(unfreeze_epoch),
        head_opt_(head_->parameters(), 0.1),
        backbone_opt_(backbone_->parameters(), 0.01) {}
  void epoch(int epoch) {
    for (auto& p : backbone_->parameters()) p.set_requires_grad(epoch >= unfreeze_epoch_);
    head_opt_.zero_grad();
    backbone_opt_.zero_grad();
    scaler_.scale(head_(backbone_(torch::randn({4, 8}))).sum()).backward();
    scaler_.step(head_opt_);
    scaler_.step(backbone_opt_);  // dtype-lint-expect: DL207 {{none of the parameters of 'backbone_opt_' has a gradient}}
    scaler_.update();
  }
  // The clean look-alike: the backbone's optimizer steps only once it trains.
  void epochSteppingWhatTrains(int epoch) {
    for (auto& p : backbone_->parameters()) p.set_requires_grad(epoch >= unfreeze_epoch_);
    head_opt_.zero_grad();
    backbone_opt_.zero_grad();
    scaler_.scale(head_(backbone_(torch::randn({4, 8}))).sum()).backward();
    scaler_.step(head_opt_);
    if (epoch >= unfreeze_epoch_) scaler_.step(backbone_opt_);
    scaler_.update();
  }

 private:
  int unfreeze_epoch_;
  torch::nn::Linear backbone_{8, 8}, head_{8, 1};
  torch::optim::SGD head_opt_, backbone_opt_;
  GradScaler scaler_;
};

// An unscale under `if (micro + 1 == accum)` in the micro-batch loop runs on
// its last pass only: no second unscale follows it before the step (set AI
// p06, a clean program). Unscaled on every pass is DL201
// (unscale_in_accumulation_loop).
void unscale_on_the_last_micro_batch(int accum) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    for (int micro = 0; micro < accum; ++micro) {
      scaler.scale(loss_of(model) / accum).backward();
      if (micro + 1 == accum) {
        scaler.unscale_(opt);
        torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      }
    }
    scaler.step(opt);
    scaler.update();
  }
}
