// The restoring autocast guard of restoring_autocast_guard.cpp written with
// LibTorch's 2.4+ API, which takes the device as an argument
// (is_autocast_enabled(at::kCPU), get/set_autocast_dtype): the same findings.
// (A device held in a member, DeviceAutocast(device_), is not followed yet:
// both devices' autocast state become unknown there, and nothing is reported.)
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace at::autocast {
// The LibTorch 2.4+ API, declared here so this case also builds against 1.13.
bool is_autocast_enabled(at::DeviceType device);
void set_autocast_enabled(at::DeviceType device, bool enabled);
at::ScalarType get_autocast_dtype(at::DeviceType device);
void set_autocast_dtype(at::DeviceType device, at::ScalarType dtype);
}  // namespace at::autocast

class CpuAutocast {
 public:
  explicit CpuAutocast(at::ScalarType dtype)
      : prev_enabled_(at::autocast::is_autocast_enabled(at::kCPU)),
        prev_dtype_(at::autocast::get_autocast_dtype(at::kCPU)) {
    at::autocast::set_autocast_dtype(at::kCPU, dtype);
    at::autocast::set_autocast_enabled(at::kCPU, true);
  }
  ~CpuAutocast() {
    at::autocast::set_autocast_enabled(at::kCPU, prev_enabled_);  // dtype-lint-expect: DL107:5 {{autocast disabled without at::autocast::clear_cache()}}
    at::autocast::set_autocast_dtype(at::kCPU, prev_dtype_);
  }

 private:
  bool prev_enabled_;
  at::ScalarType prev_dtype_;
};

void outside_after_the_guard(torch::nn::Linear& fc) {
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  {
    CpuAutocast autocast(at::kBFloat16);
    fc(x);  // inside: autocast casts
  }
  at::autocast::clear_cache();
  fc(x);  // dtype-lint-expect: DL101:3 {{'linear' on operands of different dtypes outside autocast (input 'x': BFloat16, the parameters of 'fc': Float)}}
}

void stale_weights(torch::nn::Linear& model, torch::optim::SGD& optimizer) {
  for (int i = 0; i < 3; ++i) {
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      CpuAutocast autocast(at::kBFloat16);
      loss = model(torch::randn({4, 8})).pow(2).mean();
    }
    loss.to(torch::kFloat).backward();
    optimizer.step();
  }
}

void cleared(torch::nn::Linear& model, torch::optim::SGD& optimizer) {
  for (int i = 0; i < 3; ++i) {
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      CpuAutocast autocast(at::kBFloat16);
      loss = model(torch::randn({4, 8})).pow(2).mean();
    }
    at::autocast::clear_cache();
    loss.to(torch::kFloat).backward();
    optimizer.step();
  }
}

int main() {
  torch::nn::Linear model(8, 2);
  torch::nn::Linear fc(4, 4);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  outside_after_the_guard(fc);
  stale_weights(model, optimizer);
  cleared(model, optimizer);
}
