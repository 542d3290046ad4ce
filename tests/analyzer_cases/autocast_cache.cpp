// DL107: an optimizer step while autocast's weight cache is filled.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

void kept_on_across_steps() {
  torch::nn::Linear fc(4, 1);
  torch::optim::Adam opt(fc->parameters());
  at::autocast::set_enabled(true);
  for (int i = 0; i < 3; ++i) {
    auto loss = fc(torch::randn({2, 4})).to(torch::kFloat).sum();
    loss.backward();
    opt.step();  // dtype-lint-expect: DL107:5 {{optimizer step on 'opt' while autocast's cache still holds low-precision copies of the old weights (autocast is still enabled)}}
  }
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
}

void cleared_every_iteration() {
  torch::nn::Linear fc(4, 1);
  torch::optim::SGD opt(fc->parameters(), 0.1);
  for (int i = 0; i < 3; ++i) {
    at::autocast::set_enabled(true);
    auto loss = fc(torch::randn({2, 4})).to(torch::kFloat).sum();
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
    opt.step();
  }
}

void cleared_on_one_path_only(bool clear) {
  torch::nn::Linear fc(4, 1);
  auto opt = std::make_unique<torch::optim::SGD>(fc->parameters(), 0.1);
  at::autocast::set_cpu_enabled(true);
  auto loss = fc(torch::randn({2, 4})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);  // dtype-lint-expect: DL107 (when clear is not set; the note says so)
  if (clear) at::autocast::clear_cache();
  loss.backward();
  opt->step();
}

void no_autocast_no_cache() {
  torch::nn::Linear fc(4, 1);
  torch::optim::SGD opt(fc->parameters(), 0.1);
  auto loss = fc(torch::randn({2, 4})).sum();
  loss.backward();
  opt.step();
}

void through_a_pointer() {
  torch::nn::Linear fc(4, 1);
  auto opt = std::make_unique<torch::optim::SGD>(fc->parameters(), 0.1);
  at::autocast::set_cpu_enabled(true);
  auto loss = fc(torch::randn({2, 4})).to(torch::kFloat).sum();
  at::autocast::set_cpu_enabled(false);  // dtype-lint-expect: DL107
  loss.backward();
  opt->step();
}

// Micro-batches each leave the region without clear_cache(); the step after
// the loop uses weights they cached (the loop ran: there was something to step).
void left_in_every_micro_batch(const std::vector<torch::Tensor>& micro_batches) {
  torch::nn::Linear fc(4, 1);
  torch::optim::SGD opt(fc->parameters(), 0.1);
  opt.zero_grad();
  for (const auto& batch : micro_batches) {
    at::autocast::set_cpu_enabled(true);
    auto loss = fc(batch).to(torch::kFloat).sum();
    at::autocast::set_cpu_enabled(false);  // dtype-lint-expect: DL107
    loss.backward();
  }
  opt.step();
}

// The same loop, cleared at the end of each micro-batch: clean.
void cleared_in_every_micro_batch(const std::vector<torch::Tensor>& micro_batches) {
  torch::nn::Linear fc(4, 1);
  torch::optim::SGD opt(fc->parameters(), 0.1);
  opt.zero_grad();
  for (const auto& batch : micro_batches) {
    at::autocast::set_cpu_enabled(true);
    auto loss = fc(batch).to(torch::kFloat).sum();
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    loss.backward();
  }
  opt.step();
}
