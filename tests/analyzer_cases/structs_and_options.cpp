// Tensors kept in the user's structs, and dtypes kept in options variables.
#include <torch/torch.h>

struct Workspace {
  torch::Tensor proj;
  torch::Tensor hidden;
};

Workspace make_workspace() {
  auto half = torch::TensorOptions().dtype(torch::kHalf);
  Workspace ws;
  ws.proj = torch::empty({4, 8}, half);
  ws.hidden = torch::empty({4, 8});
  return ws;
}

void fill(Workspace& ws, const torch::Tensor& x, const torch::Tensor& w) {
  at::mm_out(ws.proj, x, w);  // dtype-lint-expect: DL102
  at::mm_out(ws.hidden, x, w);
}

void run() {
  auto ws = make_workspace();
  auto x = torch::randn({4, 4});
  auto w = torch::randn({4, 8});
  fill(ws, x, w);
  ws.proj.mm(torch::randn({8, 2}));  // dtype-lint-expect: DL101
  ws.proj = ws.proj.to(torch::kFloat);
  ws.proj.mm(torch::randn({8, 2}));
}

torch::Tensor from_options(torch::TensorOptions opts, const torch::Tensor& w) {
  // Options from the caller: BFloat16 when options_variables() passes bf16;
  // options no caller shows are an unknown dtype, never assumed Float.
  auto x = torch::randn({2, 4}, opts);
  return x.mm(w);  // dtype-lint-expect: DL101
}

void options_variables() {
  auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16);
  auto w = torch::randn({4, 4});
  torch::randn({2, 4}, bf16).mm(w);  // dtype-lint-expect: DL101
  from_options(bf16, w);
  auto dtype = torch::kHalf;
  torch::randn({2, 4}, dtype).mm(w);  // dtype-lint-expect: DL101
}
