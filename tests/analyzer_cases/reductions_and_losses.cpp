// DL105 precision-sensitive ops in Half/BFloat16 outside autocast, DL106
// backward on a low-precision loss.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace F = torch::nn::functional;

void reductions() {
  auto h = torch::randn({4, 16}, torch::kHalf);
  torch::softmax(h, 1);  // dtype-lint-expect: DL105:3 {{'softmax' computed in Half outside autocast}}
  torch::log_softmax(h, 1);  // dtype-lint-expect: DL105
  h.softmax(-1);  // dtype-lint-expect: DL105
  h.softmax(-1, torch::kFloat);
  torch::softmax(h, 1, torch::kFloat);
  F::softmax(h, F::SoftmaxFuncOptions(1));  // dtype-lint-expect: DL105
  F::softmax(h, F::SoftmaxFuncOptions(1).dtype(torch::kFloat));
  h.sum();  // dtype-lint-expect: DL105
  h.sum(torch::kFloat);
  h.sum(1);  // over one dim of unknown size: not flagged
  h.mean();  // dtype-lint-expect: DL105
  h.exp();  // dtype-lint-expect: DL105
  h.pow(2);  // dtype-lint-expect: DL105
  h.norm();  // dtype-lint-expect: DL105
  torch::layer_norm(h, {16});  // dtype-lint-expect: DL105
  h.to(torch::kFloat).softmax(1);
  auto f = torch::randn({4, 16});
  f.softmax(1);
  h.relu();
  h.abs().max();
}

void losses() {
  auto logits = torch::randn({4, 10}, torch::kHalf);
  auto targets = torch::randint(0, 10, {4});
  auto loss = F::cross_entropy(logits, targets);  // dtype-lint-expect: DL105
  loss.backward();  // dtype-lint-expect: DL106:3 {{backward() on a Half loss 'loss': compute the loss in Float (e.g. loss.to(torch::kFloat)) before backward()}}
  auto good = F::cross_entropy(logits.to(torch::kFloat), targets);
  good.backward();
  auto mse = torch::mse_loss(logits, torch::zeros_like(logits));  // dtype-lint-expect: DL105
  mse.to(torch::kFloat).backward();
}

void under_autocast_losses_are_float() {
  torch::nn::Linear fc(10, 10);
  auto x = torch::randn({4, 10});
  at::autocast::set_enabled(true);
  auto out = fc(x);  // Half by autocast
  auto loss = torch::mse_loss(out, torch::zeros({4, 10}));  // Float by autocast
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  loss.backward();
  auto s = out.sum(torch::kFloat);
  s.backward();
  auto raw = out.sum();  // dtype-lint-expect: DL105
  torch::autograd::backward({raw});  // dtype-lint-expect: DL106
}

// A pairwise ranking loss whose scores come out of BFloat16 CPU autocast:
// log_sigmoid is on none of autocast's lists and keeps its input's dtype.
void bpr_loss_under_cpu_autocast() {
  torch::nn::Linear tower(8, 8);
  at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto scores = torch::matmul(tower(torch::randn({4, 8})), torch::randn({8, 8}));
  auto loss = -torch::log_sigmoid(scores.diagonal() - scores.slice(1, 0, 4).mean(1)).mean();
  auto upcast = -torch::log_sigmoid(scores.diagonal().to(torch::kFloat)).mean();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  loss.backward();  // dtype-lint-expect: DL106:3 {{backward() on a BFloat16 loss 'loss'}}
  upcast.backward();
}

void backward_on_unknown(torch::Tensor loss) { loss.backward(); }

void loss_and_norm_modules() {
  torch::nn::MSELoss criterion;
  auto pred = torch::randn({4, 1}, torch::kHalf);
  auto loss = criterion(pred, torch::zeros_like(pred));  // dtype-lint-expect: DL105
  loss.backward();  // dtype-lint-expect: DL106
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({16}));
  norm->to(torch::kHalf);
  norm(torch::randn({2, 16}, torch::kHalf));  // dtype-lint-expect: DL105
  auto ok = criterion(pred.to(torch::kFloat), torch::zeros({4, 1}));
  ok.backward();
}

// Every loss, not only the common ones: CTC over Half log-probabilities.
void ctc_loss_in_half(const torch::Tensor& targets, const torch::Tensor& input_lengths,
                      const torch::Tensor& target_lengths) {
  auto logits = torch::randn({50, 4, 20}, torch::kHalf);
  auto log_probs = torch::log_softmax(logits, 2);  // dtype-lint-expect: DL105
  auto loss = torch::ctc_loss(log_probs, targets, input_lengths, target_lengths);  // dtype-lint-expect: DL105
  loss.backward();  // dtype-lint-expect: DL106
  auto upcast = torch::ctc_loss(log_probs.to(torch::kFloat), targets, input_lengths, target_lengths);
  upcast.backward();
}
