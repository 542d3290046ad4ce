// The C++ port of PyTorch's GradScaler that projects copy (namespace
// torch::amp): unscale_ groups the gradients by device and dtype and runs the
// raw unscale op once per group, in a loop over a map. That is one unscale of
// the optimizer, not several; calling unscale_ twice is still DL201.
#include <ATen/ATen.h>
#include <torch/torch.h>

#include <unordered_map>
#include <vector>

namespace torch::amp {

class GradScaler {
 public:
  torch::Tensor scale(const torch::Tensor& outputs) {
    if (!scale_.defined()) scale_ = torch::full({1}, 65536.0, outputs.options().dtype(torch::kFloat));
    return outputs * scale_;
  }
  void unscale_(torch::optim::Optimizer& optimizer) {
    auto inv_scale = scale_.reciprocal();
    auto found_inf = torch::zeros({1});
    found_inf_per_device_ = unscale_grads_(optimizer, inv_scale, found_inf);
  }
  void step(torch::optim::Optimizer& optimizer) {
    if (found_inf_per_device_.empty()) unscale_(optimizer);
    double found = 0;
    for (auto& [device, found_inf] : found_inf_per_device_) found += found_inf.item<double>();
    if (found == 0) optimizer.step();
  }
  void update() {
    auto found_inf_combined = torch::zeros({1});
    for (auto& [device, found_inf] : found_inf_per_device_) found_inf_combined += found_inf.to(torch::kCPU);
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_combined, 2.0, 0.5, 2000);
    found_inf_per_device_.clear();
  }

 private:
  std::unordered_map<c10::Device, torch::Tensor> unscale_grads_(torch::optim::Optimizer& optimizer,
                                                                const torch::Tensor& inv_scale,
                                                                const torch::Tensor& found_inf) {
    std::unordered_map<c10::Device, std::unordered_map<int, std::vector<torch::Tensor>>> per_device_and_dtype_grads;
    std::unordered_map<c10::Device, torch::Tensor> per_device_inv_scale, per_device_found_inf;
    for (auto& group : optimizer.param_groups())
      for (auto& param : group.params()) {
        if (!param.grad().defined()) continue;
        per_device_and_dtype_grads[param.device()][static_cast<int>(param.scalar_type())].push_back(param.grad());
        per_device_inv_scale.emplace(param.device(), inv_scale.to(param.device()));
        per_device_found_inf.emplace(param.device(), found_inf.to(param.device()));
      }
    for (auto& [device, per_dtype_grads] : per_device_and_dtype_grads)
      for (auto& [dtype, grads] : per_dtype_grads)
        at::_amp_foreach_non_finite_check_and_unscale_(grads, per_device_found_inf[device], per_device_inv_scale[device]);
    return per_device_found_inf;
  }

  torch::Tensor scale_;
  torch::Tensor growth_tracker_ = torch::zeros({1}, torch::kInt);
  std::unordered_map<c10::Device, torch::Tensor> found_inf_per_device_;
};

}  // namespace torch::amp

void train(torch::nn::Linear& model, torch::optim::SGD& optimizer, torch::amp::GradScaler& scaler) {
  for (int i = 0; i < 3; ++i) {
    optimizer.zero_grad();
    auto loss = model(torch::randn({4, 8})).pow(2).mean();
    scaler.scale(loss).backward();
    scaler.unscale_(optimizer);
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(optimizer);
    scaler.update();
  }
}

void train_with_a_second_unscale(torch::nn::Linear& model, torch::optim::SGD& optimizer,
                                 torch::amp::GradScaler& scaler) {
  optimizer.zero_grad();
  scaler.scale(model(torch::randn({4, 8})).pow(2).mean()).backward();
  scaler.unscale_(optimizer);
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  scaler.unscale_(optimizer);  // dtype-lint-expect: DL201:3 {{gradients of 'optimizer' unscaled again before 'scaler'.update()}}
  scaler.step(optimizer);
  scaler.update();
}

int main() {
  torch::nn::Linear model(8, 2);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  torch::amp::GradScaler scaler;
  train(model, optimizer, scaler);
  train_with_a_second_unscale(model, optimizer, scaler);
}
