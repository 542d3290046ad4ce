// An RAII autocast guard that saves the autocast state it found and restores
// it on its way out, as torch.autocast does: after its scope autocast is off
// again, and its weight cache still needs clear_cache().
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

class AutocastGuard {
 public:
  explicit AutocastGuard(at::ScalarType dtype = at::kBFloat16, bool enabled = true)
      : prev_enabled_(at::autocast::is_cpu_enabled()), prev_dtype_(at::autocast::get_autocast_cpu_dtype()) {
    at::autocast::increment_nesting();
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
  ~AutocastGuard() {
    at::autocast::decrement_nesting();
    at::autocast::set_cpu_enabled(prev_enabled_);  // dtype-lint-expect: DL107 (stale_weights leaves its region here)
    at::autocast::set_autocast_cpu_dtype(prev_dtype_);
  }

 private:
  bool prev_enabled_;
  at::ScalarType prev_dtype_;
};

// The guard restores the state but never clears the cache.
void stale_weights(torch::nn::Linear& model, torch::optim::SGD& optimizer) {
  for (int i = 0; i < 3; ++i) {
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      AutocastGuard autocast;
      loss = model(torch::randn({4, 8})).pow(2).mean();
    }
    loss.to(torch::kFloat).backward();
    optimizer.step();
  }
}

// The same guard with the cache cleared after its scope: clean.
void cleared(torch::nn::Linear& model, torch::optim::SGD& optimizer) {
  for (int i = 0; i < 3; ++i) {
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      AutocastGuard autocast;
      loss = model(torch::randn({4, 8})).pow(2).mean();
    }
    at::autocast::clear_cache();
    loss.to(torch::kFloat).backward();
    optimizer.step();
  }
}

// The same kind of guard saving the state in its constructor's body, and
// switched on by a flag: after its scope autocast is off again.
class SavingGuard {
 public:
  explicit SavingGuard(bool enabled) : enabled_(enabled) {
    prev_enabled_ = at::autocast::is_cpu_enabled();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(enabled_);
  }
  ~SavingGuard() {
    at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(prev_enabled_);
  }

 private:
  bool enabled_;
  bool prev_enabled_ = false;
};

void restored_in_body(torch::nn::Linear& model) {
  {
    SavingGuard autocast(true);
    model(torch::randn({4, 8}).to(torch::kBFloat16)).to(torch::kFloat).sum().backward();
  }
  model(torch::randn({4, 8}).to(torch::kBFloat16));  // dtype-lint-expect: DL101:3 {{'linear' on operands of different dtypes outside autocast (input 'torch::randn({4, 8}).to(torch::kBFloat16)'}}
}

int main() {
  torch::nn::Linear model(8, 2);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  stale_weights(model, optimizer);
  cleared(model, optimizer);
  restored_in_body(model);
}

// `with torch.autocast(enabled=False):` as a guard derived from the saving
// one: its implicit destructor runs the base's, which turns autocast back on
// for the matmul after the Float block.
class AutocastOff : public SavingGuard {
 public:
  AutocastOff() : SavingGuard(false) {}
};

void float_block_inside_a_region(torch::nn::Linear& bf16_model) {
  bf16_model->to(torch::kBFloat16);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto h = torch::randn({4, 8});
  {
    AutocastOff fp32;
    h = torch::softmax(h, -1);
  }
  bf16_model(h);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}
