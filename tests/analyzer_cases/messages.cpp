// Findings whose messages and notes the tests check word for word.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

torch::Tensor classify(torch::Tensor features) {
  torch::nn::Linear head(8, 2);
  features = features.to(torch::kBFloat16);
  auto logits = head(features);  // dtype-lint-expect: DL101:17 {{'linear' on operands of different dtypes outside autocast (input 'features': BFloat16, the parameters of 'head': Float)}}
  return logits;
}

torch::Tensor project(const torch::Tensor& a, const torch::Tensor& b) {
  return a.matmul(b);  // dtype-lint-expect: DL101
}

void attention() {
  auto q = torch::randn({4, 8}, torch::kHalf);
  auto k = torch::randn({8, 4});
  auto scores = project(q, k);
}

void lora_backward(const torch::Tensor& x) {
  auto g = torch::randn({4, 4}, torch::dtype(torch::kBFloat16));
  auto grad_buffer = torch::zeros({4, 8});
  at::mm_out(grad_buffer, g, x);  // dtype-lint-expect: DL102:3 {{'mm_out' writes a BFloat16 result into a Float destination 'grad_buffer'; out= variants are never autocast}}
}

void lora_caller() { lora_backward(torch::randn({4, 8}, torch::kBFloat16)); }

void train_with_stale_cache() {
  torch::nn::Linear net(4, 4);
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  auto x = torch::randn({2, 4});
  at::autocast::set_cpu_enabled(true);
  auto y = net(x);  // cached
  at::autocast::set_cpu_enabled(false);  // left  dtype-lint-expect: DL107:3 {{autocast disabled without at::autocast::clear_cache()}}
  y.to(torch::kFloat).sum().backward();
  optimizer.step();  // stale
}
