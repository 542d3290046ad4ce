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
  at::mm_out(ws.proj, x, w);  // dtype-lint-expect: DL102:3 {{'mm_out' writes a Float result into a Half destination 'ws.proj'; out= variants are never autocast}}
  at::mm_out(ws.hidden, x, w);
}

void run() {
  auto ws = make_workspace();
  auto x = torch::randn({4, 4});
  auto w = torch::randn({4, 8});
  fill(ws, x, w);
  ws.proj.mm(torch::randn({8, 2}));  // dtype-lint-expect: DL101:3 {{'mm' on operands of different dtypes outside autocast ('ws.proj': Half, 'torch::randn({8, 2})': Float)}}
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

// A batch struct built as an aggregate and returned as one: its tensors keep
// their dtypes through the return.
struct Batch {
  torch::Tensor images;
  torch::Tensor labels;
};

Batch make_batch(torch::Dtype storage_dtype) {
  auto images = torch::rand({2, 3, 8, 8}).to(storage_dtype);
  return {images, torch::randint(0, 10, {2}, torch::kLong)};
}

void evaluate_batch() {
  torch::nn::Sequential model(torch::nn::Flatten(), torch::nn::Linear(192, 10));
  Batch batch = make_batch(torch::kHalf);
  model->forward(batch.images);  // dtype-lint-expect: DL101
  Batch listed{torch::rand({2, 3, 8, 8}).to(torch::kHalf), batch.labels};
  model->forward(listed.images.to(torch::kFloat));
}

// A module's forward returning a struct, one field read off the call
// (`encoder_->forward(x).embedding`), meets a bank kept in Half (set AG p08).
struct EncoderOutput {
  torch::Tensor embedding;
  torch::Tensor logits;
};

struct BankEncoderImpl : torch::nn::Module {
  BankEncoderImpl() : proj(register_module("proj", torch::nn::Linear(8, 8))) {}
  EncoderOutput forward(const torch::Tensor& x) {
    auto e = proj(x);
    return {e, e.sum(-1)};
  }
  torch::nn::Linear proj;
};
TORCH_MODULE(BankEncoder);

class HalfFeatureBank {
 public:
  explicit HalfFeatureBank(torch::Dtype dtype) : feats_(torch::zeros({16, 8}, torch::TensorOptions().dtype(dtype))) {}
  const torch::Tensor& feats() const { return feats_; }

 private:
  torch::Tensor feats_;
};

void knn_against_a_half_bank(BankEncoder& encoder) {
  HalfFeatureBank bank(torch::kHalf);
  auto emb = encoder->forward(torch::randn({2, 8})).embedding;
  auto sims = torch::mm(emb, bank.feats().t());  // dtype-lint-expect: DL101 {{'emb': Float}}
  auto safe = torch::mm(emb, bank.feats().to(torch::kFloat).t());
}
