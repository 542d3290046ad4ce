// Where dtypes come from: factories, TensorOptions, conversions, *_like,
// promotion, parameters and members. DL101 is the probe.
#include <torch/torch.h>

void factories() {
  auto w = torch::randn({4, 4});
  auto a = torch::randn({4, 4}, torch::kHalf);
  a.mm(w);  // dtype-lint-expect: DL101:3 {{'mm' on operands of different dtypes outside autocast ('a': Half, 'w': Float)}}
  auto b = torch::ones({4, 4}, torch::dtype(torch::kBFloat16));
  torch::mm(b, w);  // dtype-lint-expect: DL101
  auto c = torch::zeros({4, 4}, torch::TensorOptions().dtype(torch::kHalf).requires_grad(true));
  c.matmul(w);  // dtype-lint-expect: DL101
  auto d = torch::empty({4, 4}, torch::TensorOptions().device(torch::kCPU));  // default dtype: Float
  d.mm(w);
  auto e = torch::zeros_like(a);  // inherits Half
  e.mm(w);  // dtype-lint-expect: DL101
  auto f = torch::zeros_like(a, torch::kFloat);
  f.mm(w);
  auto g = torch::randn({4, 4}, torch::requires_grad());
  g.mm(w);
}

void conversions() {
  auto w = torch::randn({4, 4});
  auto x = torch::randn({4, 4});
  auto h = x.toType(torch::kHalf);
  h.mm(w);  // dtype-lint-expect: DL101
  auto b = x.to(torch::kCPU, torch::kBFloat16);
  b.mm(w);  // dtype-lint-expect: DL101
  auto back = b.to(w.dtype());
  back.mm(w);
  auto same = h.to(w);
  same.mm(w);
  auto as = h.type_as(w);
  as.mm(w);
  auto moved = h.to(torch::kCPU);  // device only: still Half
  moved.mm(w);  // dtype-lint-expect: DL101
  auto scalar_type = h.to(w.scalar_type());
  scalar_type.mm(w);
  auto opts = h.to(w.options());
  opts.mm(w);
}

void promotion() {
  auto w = torch::randn({4, 4});
  auto h = torch::randn({4, 4}, torch::kHalf);
  auto scaled = h * 0.5;  // a scalar does not promote
  scaled.mm(w);  // dtype-lint-expect: DL101
  auto sum = h + w;  // Half + Float -> Float
  sum.mm(w);
  auto relu = torch::relu(h).t().contiguous();
  relu.mm(w);  // dtype-lint-expect: DL101
  auto mask = h > 0;  // Bool, not a matmul operand
  auto idx = torch::argmax(h, 1);
}

torch::Tensor half_copy(const torch::Tensor& t) { return t.to(torch::kHalf); }
torch::Tensor passthrough(torch::Tensor t) { return t; }

void helpers() {
  auto w = torch::randn({4, 4});
  auto h = half_copy(w);
  h.mm(w);  // dtype-lint-expect: DL101
  auto p = passthrough(w);
  p.mm(w);
  auto q = passthrough(h);
  q.mm(w);  // dtype-lint-expect: DL101
}

struct Projection {
  torch::Tensor weight = torch::randn({4, 4});
  torch::Tensor apply(const torch::Tensor& x) { return x.mm(weight); }
};

void parameters_unknown(torch::Tensor x, torch::Tensor y) {
  x.mm(y);  // nothing is known about either: silent
  auto z = x.to(torch::kHalf);
  z.mm(y);  // y unknown: silent
}

void einsum_and_linear() {
  auto w = torch::randn({4, 4});
  auto h = torch::randn({2, 4}, torch::kBFloat16);
  torch::einsum("ij,jk->ik", {h, w});  // dtype-lint-expect: DL101
  torch::nn::functional::linear(h, w);  // dtype-lint-expect: DL101
  torch::nn::functional::linear(h.to(torch::kFloat), w);
}

void linalg_keeps_the_dtype() {
  auto cov = torch::eye(4, torch::kDouble) * 2.0;
  // torch::linalg::inv in LibTorch 1.x; the ATen names below exist in 1.x and 2.x.
  auto whitening = torch::linalg_inv(torch::linalg_cholesky(cov)).t();  // Double, as its input
  auto x = torch::randn({8, 4});
  torch::matmul(x, whitening);  // dtype-lint-expect: DL101
  torch::matmul(x, whitening.to(torch::kFloat));
  auto solved = torch::linalg_solve(cov, torch::randn({4, 2}, torch::kDouble), /*left=*/true);
  x.mm(solved);  // dtype-lint-expect: DL101
  auto n = torch::linalg_vector_norm(torch::randn({4}, torch::kHalf), 2, {}, false, {});  // dtype-lint-expect: DL105:12 {{'linalg_vector_norm' computed in Half outside autocast}}
}

// Sampling and elementwise ops keep their input's dtype through a helper.
torch::Tensor term_frequencies(const torch::Tensor& topic_words, const torch::Tensor& labels) {
  auto counts = torch::poisson(topic_words.index({labels}) * 3.0 + 0.05);
  return torch::log1p(counts / counts.sum(1, true).clamp_min(1.0));
}

void sampled_features_meet_half_weights() {
  auto topics = torch::rand({4, 16});
  auto labels = torch::randint(0, 4, {8}, torch::kLong);
  auto weight = torch::randn({16, 16}, torch::kHalf);
  term_frequencies(topics, labels).mm(weight);  // dtype-lint-expect: DL101
  term_frequencies(topics.to(torch::kHalf), labels).mm(weight);
}

// Functional normalization keeps its input's dtype.
void normalized_query_meets_half_cache(const torch::Tensor& raw) {
  auto cache = torch::randn({16, 8}, torch::kHalf);
  auto q = torch::nn::functional::normalize(raw.to(torch::kFloat),
                                            torch::nn::functional::NormalizeFuncOptions().dim(-1));
  auto scores = torch::mm(cache, q.t());  // dtype-lint-expect: DL101
}

// The compute dtype as a template argument: each instantiation has its own
// (the kHalf one's head is called with a Float input).
struct PairHeadImpl : torch::nn::Module {
  PairHeadImpl() { out = register_module("out", torch::nn::Linear(8, 2)); }
  torch::Tensor forward(const torch::Tensor& x) { return out(x); }
  torch::nn::Linear out{nullptr};
};
TORCH_MODULE(PairHead);

template <c10::ScalarType kCompute>
class TypedFinetuner {
 public:
  TypedFinetuner() { head_->to(kCompute); }
  torch::Tensor scores(const torch::Tensor& features) { return head_(features); }  // dtype-lint-expect: DL101 (the kHalf instance)

 private:
  PairHead head_;
};

void finetune_typed() {
  TypedFinetuner<torch::kHalf> half;
  TypedFinetuner<torch::kFloat> full;
  auto features = torch::randn({4, 8});
  half.scores(features);
  full.scores(features);
}

// A Gaussian blur kernel built from an outer product keeps its Float dtype
// through a helper; Half images convolved with it mismatch.
torch::Tensor gaussian_kernel(int64_t size, double sigma) {
  auto ax = torch::arange(size, torch::TensorOptions().dtype(torch::kFloat)) - (size - 1) / 2.0;
  auto g = torch::exp(-(ax * ax) / (2.0 * sigma * sigma));
  auto k2 = torch::outer(g, g);
  k2 = k2 / k2.sum();
  return k2.expand({3, 1, size, size}).contiguous();
}

void blur_half_images(const torch::Tensor& pixels) {
  auto blur = gaussian_kernel(5, 1.0);
  auto x = pixels.to(torch::kHalf).div(127.5).sub(1.0);
  auto blurred = torch::conv2d(x, blur, {}, 1, 2, 1, 3);  // dtype-lint-expect: DL101
  auto matched = torch::conv2d(x, blur.to(torch::kHalf), {}, 1, 2, 1, 3);
}
