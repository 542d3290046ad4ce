// Autocast regions, through the LibTorch <= 2.3 API and the 2.4+ API.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace at::autocast {
// The LibTorch 2.4+ API, declared here so this case also builds against 1.13.
void set_autocast_enabled(at::DeviceType device, bool enabled);
void set_autocast_dtype(at::DeviceType device, at::ScalarType dtype);
}  // namespace at::autocast

void legacy_cuda_api() {
  auto w = torch::randn({4, 4});
  auto h = torch::randn({4, 4}, torch::kHalf);
  at::autocast::set_enabled(true);
  h.mm(w);
  torch::matmul(h, w);
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  h.mm(w);  // dtype-lint-expect: DL101:3 {{'mm' on operands of different dtypes outside autocast ('h': Half, 'w': Float)}}
}

void legacy_cpu_api() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto y = fc(x);
  auto w = torch::randn({4});
  x[0].dot(w);  // dtype-lint-expect: DL101
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  fc(x);  // dtype-lint-expect: DL101
}

void new_api() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kHalf);
  at::autocast::set_autocast_dtype(at::kCUDA, at::kHalf);
  at::autocast::set_autocast_enabled(at::kCUDA, true);
  fc(x);
  x[0].dot(torch::randn({4}));  // CUDA autocast promotes dot: silent
  at::autocast::set_autocast_enabled(at::kCUDA, false);
  at::autocast::clear_cache();
  fc(x);  // dtype-lint-expect: DL101
}

void autocast_outputs_have_the_autocast_dtype() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4});
  at::autocast::set_cpu_enabled(true);
  auto y = fc(x);  // BFloat16 by autocast
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  auto w = torch::randn({4, 4});
  y.mm(w);  // dtype-lint-expect: DL101
}

void maybe_enabled(bool amp) {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  at::autocast::set_cpu_enabled(amp);
  fc(x);  // dtype-lint-expect: DL101 (when amp is false autocast is off; the note says so)
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

void enable_amp() { at::autocast::set_cpu_enabled(true); }
void disable_amp() {
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

void helpers_switch_autocast() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  enable_amp();
  fc(x);
  disable_amp();
  fc(x);  // dtype-lint-expect: DL101
}

struct AutocastGuard {
  AutocastGuard() { at::autocast::set_cpu_enabled(true); }
  ~AutocastGuard() {
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
};

void raii_guard() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  {
    AutocastGuard guard;
    fc(x);
  }
  fc(x);  // dtype-lint-expect: DL101
}

torch::Tensor project(const torch::Tensor& a, const torch::Tensor& b) { return a.mm(b); }

void helper_inherits_the_callers_autocast() {
  auto h = torch::randn({4, 4}, torch::kBFloat16);
  auto w = torch::randn({4, 4});
  at::autocast::set_cpu_enabled(true);
  project(h, w);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}
