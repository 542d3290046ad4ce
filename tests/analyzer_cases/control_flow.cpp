// Flow: branches merge, loops iterate, early returns end paths.
#include <torch/torch.h>

void branch_on_one_path(bool use_half) {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4});
  if (use_half) x = x.to(torch::kHalf);
  x.mm(w);  // dtype-lint-expect: DL101 (when use_half is set; the note says so)
}

void branch_on_every_path(bool flag) {
  auto w = torch::randn({4, 4});
  torch::Tensor x;
  if (flag)
    x = torch::randn({4, 4}, torch::kHalf);
  else
    x = torch::randn({4, 4}, torch::kBFloat16);
  x.mm(w);  // dtype-lint-expect: DL101:3 {{'mm' on operands of different dtypes outside autocast ('x': BFloat16, 'w': Float)}}
}

void correlated_branches(bool use_half) {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4});
  if (use_half) {
    x = x.to(torch::kHalf);
    w = w.to(torch::kHalf);
  }
  x.mm(w);  // equal on every real path: silent
}

void converted_then_fixed() {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4}).to(torch::kHalf);
  x = x.to(torch::kFloat);
  x.mm(w);
}

void loop_keeps_dtype(int steps) {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4}, torch::kHalf);
  for (int i = 0; i < steps; ++i) {
    auto y = x.mm(w);  // dtype-lint-expect: DL101
    if (i == 2) continue;
    x = x * 0.9;
  }
}

void early_return(bool done) {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4}, torch::kHalf);
  if (done) return;
  while (true) {
    x.mm(w);  // dtype-lint-expect: DL101
    break;
  }
}

void inside_lambda_is_not_followed() {
  auto w = torch::randn({4, 4});
  auto run = [&](const torch::Tensor& t) { return t.mm(w); };
  run(torch::randn({4, 4}));
}

void try_catch() {
  auto w = torch::randn({4, 4});
  try {
    auto x = torch::randn({4, 4}, torch::kBFloat16);
    x.mm(w);  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
  }
}

// A matmul on mismatched dtypes raises: only the catch handler continues, so
// what follows sees the dtypes the handler fixed.
void retry_after_a_caught_mismatch() {
  auto q = torch::randn({2, 1, 4});
  auto keys = torch::randn({2, 3, 4}, torch::kBFloat16);
  torch::Tensor scores;
  try {
    scores = torch::bmm(q, keys.transpose(1, 2));  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
    keys = keys.to(torch::kFloat);
    scores = torch::bmm(q, keys.transpose(1, 2));
  }
  auto pooled = torch::bmm(torch::softmax(scores, -1), keys);
  pooled.mm(torch::randn({4, 4}, torch::kHalf));  // dtype-lint-expect: DL101
}

// A handler starts from the states at the calls that may throw; here x is
// Half at each of them.
void handler_sees_the_state_at_the_throw() {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4}, torch::kHalf);
  try {
    x = torch::relu(x);
  } catch (const c10::Error&) {
    x.mm(w);  // dtype-lint-expect: DL101
  }
}
