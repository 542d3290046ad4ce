// A factory that builds the whole experiment and returns it as a tuple,
// unpacked with structured bindings; an optimizer's eps read from a config
// field with a default.
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "common/grad_scaler.h"

struct Settings {
  bool half = false;
  double lr = 1e-3;
  double eps = 1e-8;
};

Settings settings_from_argv(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--precision") s.half = std::string(argv[i + 1]) == "fp16";
    if (key == "--eps") s.eps = std::stod(argv[i + 1]);
  }
  return s;
}

using Experiment = std::tuple<torch::nn::Linear, std::unique_ptr<torch::optim::Adam>, GradScaler>;

Experiment make_experiment(const Settings& s) {
  torch::nn::Linear model(16, 1);
  if (s.half) model->to(torch::kHalf);
  auto optimizer = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(s.lr).eps(s.eps));  // dtype-lint-expect: DL304 {{Adam 'optimizer' eps=1e-08 is zero in Half}}
  return {model, std::move(optimizer), GradScaler()};
}

void train(const Settings& s) {
  auto [model, optimizer, scaler] = make_experiment(s);
  for (int step = 0; step < 10; ++step) {
    optimizer->zero_grad();
    auto loss = model(torch::randn({8, 16}).to(model->weight.scalar_type())).to(torch::kFloat).pow(2).mean();
    scaler.scale(loss).backward();
    scaler.step(*optimizer);  // dtype-lint-expect: DL202 {{'scaler' unscales the gradients of 'optimizer', whose parameters are Half}}
    scaler.update();
  }
}

// The same factory shape with the model kept in Float: nothing to report.
std::pair<torch::nn::Linear, std::unique_ptr<torch::optim::Adam>> make_float_experiment(const Settings& s) {
  torch::nn::Linear model(16, 1);
  auto optimizer = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(s.lr).eps(s.eps));
  return {model, std::move(optimizer)};
}

void train_float(const Settings& s) {
  auto [model, optimizer] = make_float_experiment(s);
  GradScaler scaler;
  for (int step = 0; step < 10; ++step) {
    optimizer->zero_grad();
    scaler.scale(model(torch::randn({8, 16})).pow(2).mean()).backward();
    scaler.step(*optimizer);
    scaler.update();
  }
}

// A scaler returned in a std::optional engaged for fp16 only, next to a
// model converted to BFloat16 for bf16: the bf16 run has no scaler.
enum class Precision { kFloat, kMixedHalf, kBFloat16 };

Precision precision_from_argv(int argc, char** argv) {
  const std::string value = argc > 1 ? argv[1] : "fp32";
  if (value == "fp16") return Precision::kMixedHalf;
  if (value == "bf16") return Precision::kBFloat16;
  return Precision::kFloat;
}

using MixedExperiment = std::tuple<torch::nn::Linear, std::unique_ptr<torch::optim::SGD>, std::optional<GradScaler>>;

MixedExperiment make_mixed_experiment(Precision precision) {
  torch::nn::Linear model(16, 1);
  if (precision == Precision::kBFloat16) model->to(torch::kBFloat16);
  auto optimizer = std::make_unique<torch::optim::SGD>(model->parameters(), 0.1);
  std::optional<GradScaler> scaler;
  if (precision == Precision::kMixedHalf) scaler.emplace();
  return {model, std::move(optimizer), std::move(scaler)};
}

void train_mixed(Precision precision) {
  auto [model, optimizer, scaler] = make_mixed_experiment(precision);
  for (int step = 0; step < 10; ++step) {
    optimizer->zero_grad();
    auto loss = model(torch::randn({8, 16}).to(model->weight.scalar_type())).to(torch::kFloat).pow(2).mean();
    if (scaler) {
      scaler->scale(loss).backward();
      scaler->step(*optimizer);
      scaler->update();
    } else {
      loss.backward();
      optimizer->step();
    }
  }
}

int main(int argc, char** argv) {
  const Settings s = settings_from_argv(argc, argv);
  train(s);
  train_float(s);
  train_mixed(precision_from_argv(argc, argv));
}
