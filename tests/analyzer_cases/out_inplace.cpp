// DL102: out= variants need the computed dtype exactly; in-place ops are
// flagged when they narrow. An in-place matmul's self of another dtype than
// its matrices is DL101 (PyTorch checks self against mat2 first).
#include <torch/torch.h>

#include <string>
#include <unordered_map>

void out_variants() {
  auto a = torch::randn({4, 4}, torch::kBFloat16);
  auto b = torch::randn({4, 4}, torch::kBFloat16);
  auto out = torch::empty({4, 4});
  at::mm_out(out, a, b);  // dtype-lint-expect: DL102:3 {{'mm_out' writes a BFloat16 result into a Float destination 'out'; out= variants are never autocast}}
  torch::matmul_out(out, a, b);  // dtype-lint-expect: DL102
  at::mm_outf(a, b, out);  // dtype-lint-expect: DL102
  auto out_bf16 = torch::empty({4, 4}, torch::kBFloat16);
  at::mm_out(out_bf16, a, b);
  at::bmm_out(out_bf16, a.unsqueeze(0), b.unsqueeze(0));
  auto bias = torch::zeros({4}, torch::kBFloat16);
  at::addmm_out(out, bias, a, b);  // dtype-lint-expect: DL102
}

// Master weights updated by an out= arithmetic on BFloat16 operands keep
// BFloat16 precision; a reduction's out= dtype is its accumulation dtype.
void out_elementwise(torch::Tensor master) {
  auto w = torch::randn({4}, torch::kBFloat16);
  auto g = torch::randn({4}, torch::kBFloat16);
  at::add_out(master, w, g, -0.1);
  auto master32 = torch::zeros({4});
  at::add_out(master32, w, g, -0.1);  // dtype-lint-expect: DL102
  at::add_out(master32, w.to(torch::kFloat), g.to(torch::kFloat), -0.1);
  at::mul_out(master32, master32, g);
  at::sum_out(master32, w.unsqueeze(0), {0});
}

void in_place_matmul() {
  auto a = torch::randn({4, 4}, torch::kHalf);
  auto acc = torch::zeros({4, 4});
  acc.addmm_(a, a);  // dtype-lint-expect: DL102:3 {{in-place 'addmm_' computes Half but its destination 'acc' is Float; in-place ops are never autocast}}
  auto acc_half = torch::zeros({4, 4}, torch::kHalf);
  acc_half.addmm_(a, a);
}

void in_place_elementwise() {
  auto h = torch::randn({4}, torch::kHalf);
  auto f = torch::randn({4});
  f.add_(h);  // widening: fine
  f += h;
  h.mul_(f);  // dtype-lint-expect: DL102
  h += f;  // dtype-lint-expect: DL102
  h.mul_(2.0);
  h.copy_(f);  // dtype-lint-expect: DL102
  f.copy_(h);
  auto mask = h > 0;
  h.masked_fill_(mask, 0.0);
}

// A buffer member that its declaration creates and no code assigns keeps that
// dtype: an attention map kept for logging, written by out= products.
struct AttentionProbe {
  torch::Tensor attn_map_ = torch::zeros({4, 4});
  torch::Tensor half_map_ = torch::zeros({4, 4}, torch::kHalf);
  torch::Tensor replaced_ = torch::zeros({4, 4});

  void record(const torch::Tensor& q, const torch::Tensor& k) {
    torch::matmul_out(attn_map_, q, k);  // dtype-lint-expect: DL102
    torch::matmul_out(half_map_, q, k);
    replaced_ = torch::empty({4, 4}, q.options());
    torch::matmul_out(replaced_, q, k);
  }
};

void record_half_attention() {
  AttentionProbe probe;
  probe.record(torch::randn({4, 8}, torch::kHalf), torch::randn({8, 4}, torch::kHalf));
}

// Workspaces made on first use and handed out again: a getter whose buffer is
// (re)made in Float unless it is already big enough, keyed by name in a map,
// or a member with a default dtype argument. The products written into them
// are Half; a workspace made in the product's dtype is fine.
class ScratchPool {
 public:
  torch::Tensor get(const std::string& tag, int64_t rows, int64_t cols) {
    auto& buffer = buffers_[tag];
    if (!buffer.defined() || buffer.numel() < rows * cols) buffer = torch::empty({rows * cols});
    return buffer.narrow(0, 0, rows * cols).view({rows, cols});
  }
  torch::Tensor& matrix(int64_t rows, torch::Dtype dtype = torch::kFloat) {
    if (!matrix_.defined() || matrix_.size(0) != rows) {
      matrix_ = torch::empty({rows, rows}, torch::dtype(dtype));
    }
    return matrix_;
  }

 private:
  std::unordered_map<std::string, torch::Tensor> buffers_;
  torch::Tensor matrix_;
};

void score_into_workspaces(ScratchPool& pool, ScratchPool& half_pool) {
  auto users = torch::randn({4, 8}, torch::kHalf), items = torch::randn({6, 8}, torch::kHalf);
  auto scores = pool.get("scores", 4, 6);
  torch::mm_out(scores, users, items.t());  // dtype-lint-expect: DL102
  torch::mm_out(pool.matrix(4), users, users.t());  // dtype-lint-expect: DL102
  torch::mm_out(half_pool.matrix(4, torch::kHalf), users, users.t());
}

// A recurrent encoder's output has the dtype its GEMMs run in (Float, its
// weights'), whatever its caller passed: a Half GEMM written into a buffer
// made with the output's options is a Float destination.
struct SeqEncoderImpl : torch::nn::Module {
  SeqEncoderImpl()
      : proj(register_module("proj", torch::nn::Linear(4, 8))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(8, 8).batch_first(true)))),
        gru(register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(8, 8).batch_first(true)))),
        head(register_module("head", torch::nn::Linear(8, 2))) {}
  torch::Tensor encode(const torch::Tensor& x) {
    auto out = std::get<0>(lstm(torch::gelu(proj(x))));
    return std::get<1>(gru(out)).squeeze(0);
  }
  torch::nn::Linear proj{nullptr}, head{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::GRU gru{nullptr};
};
TORCH_MODULE(SeqEncoder);

torch::Tensor half_head_into_float(SeqEncoder& model, const torch::Tensor& history) {
  auto feats = model->encode(history);
  auto w16 = model->head->weight.detach().to(torch::kHalf);
  auto out = torch::empty({feats.size(0), w16.size(0)}, feats.options());
  return torch::mm_out(out, feats.to(torch::kHalf), w16.t());  // dtype-lint-expect: DL102
}

torch::Tensor half_head_into_half(SeqEncoder& model, const torch::Tensor& history) {
  auto feats = model->encode(history).to(torch::kHalf);
  auto w16 = model->head->weight.detach().to(torch::kHalf);
  auto out = torch::empty({feats.size(0), w16.size(0)}, feats.options());
  return torch::mm_out(out, feats, w16.t());
}

void serve_half_heads() {
  SeqEncoder model;
  auto history = torch::randn({2, 5, 4});
  half_head_into_float(model, history);
  half_head_into_half(model, history);
}

// `if (torch::GradMode::is_enabled())`: training takes the first branch; the
// workspace of the no-grad branch is written only under a NoGradGuard.
torch::Tensor scoresByMode(const torch::Tensor& q, const torch::Tensor& k, torch::Tensor& workspace) {
  if (torch::GradMode::is_enabled()) return torch::bmm(q, k.transpose(1, 2)).to(torch::kFloat);
  at::bmm_out(workspace, q, k.transpose(1, 2));  // dtype-lint-expect: DL102 {{'bmm_out' writes a Half result into a Float destination 'workspace'}}
  return workspace;
}

torch::Tensor scoresWhileTraining(const torch::Tensor& q, const torch::Tensor& k) {
  if (torch::GradMode::is_enabled()) return torch::bmm(q, k.transpose(1, 2)).to(torch::kFloat);
  auto workspace = torch::empty({2, 4, 4}, torch::kFloat);
  at::bmm_out(workspace, q, k.transpose(1, 2));
  return workspace;
}

void trainThenEvaluate() {
  auto q = torch::randn({2, 4, 8}, torch::kHalf);
  scoresWhileTraining(q, q);
  auto workspace = torch::empty({2, 4, 4}, torch::kFloat);
  torch::NoGradGuard no_grad;
  scoresByMode(q, q, workspace);
}

// A mixture of experts accumulating Half expert outputs into a Float buffer:
// index_add_ and scatter_add_ raise unless the source has self's dtype. The
// Long index is not an operand whose dtype meets self's; a Float source is fine.
void expertsIntoFloatAccumulator() {
  auto out = torch::zeros({8, 4}, torch::kFloat);
  auto rows = torch::zeros({2}, torch::kLong);
  auto y = torch::randn({2, 4}, torch::kHalf);
  out.index_add_(0, rows, y);  // dtype-lint-expect: DL102 {{'index_add_' writes a Half source into 'out', which is Float}}
  out.scatter_add_(0, rows.unsqueeze(1).expand({2, 4}), y);  // dtype-lint-expect: DL102
  out.index_add_(0, rows, y.to(torch::kFloat));
  out.add_(y);
}
