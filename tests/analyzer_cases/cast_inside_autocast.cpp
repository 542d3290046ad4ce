// DL104: casts by hand inside autocast regions that autocast undoes or turns
// into a lossy round-trip; and the casts it leaves alone.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

void float_cast_undone_by_autocast(torch::nn::Linear& fc) {
  auto x = torch::randn({8, 16}, torch::kBFloat16);
  at::autocast::set_cpu_enabled(true);  // CPU autocast: BFloat16
  auto y = fc(x.to(torch::kFloat));  // dtype-lint-expect: DL104:15 {{input 'x.to(torch::kFloat)' is cast to Float by hand inside an autocast region, but autocast casts the operands of linear to BFloat16 anyway}}
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}

void lossy_round_trip_before_an_fp32_op() {
  auto logits = torch::randn({8, 10});
  auto targets = torch::randn({8, 10});
  at::autocast::set_enabled(true);
  auto loss = torch::mse_loss(logits.to(torch::kHalf), targets);  // dtype-lint-expect: DL104
  at::autocast::set_enabled(false);
}

void look_alikes_that_are_fine(torch::nn::Linear& fc) {
  auto x = torch::randn({8, 16});
  auto w = torch::randn({16, 4});
  at::autocast::set_enabled(true);  // CUDA autocast: Half
  // A cast to autocast's own dtype right before a matmul: redundant, not wrong.
  auto redundant = x.to(torch::kHalf);
  torch::mm(redundant, w);
  // A no-op: the tensor is Float already.
  fc(x.to(torch::kFloat));
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  auto xh = x.to(torch::kHalf);  // cast before the region: a deliberate Half input
  at::autocast::set_enabled(true);
  torch::mm(xh, w);
  // Upcasting before an op autocast runs in Float anyway is harmless.
  auto loss = torch::mse_loss(torch::randn({8, 10}).to(torch::kFloat), torch::randn({8, 10}));
  // An op between the cast and the matmul: the cast served it.
  auto h = torch::relu(x.to(torch::kHalf));
  torch::mm(h, w);
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  // Outside any region: a cast is how dtypes are chosen.
  torch::mm(x.to(torch::kHalf), w.to(torch::kHalf));
}

// A module that opens autocast in its forward with the dtype it was given:
// whichever dtype that is, autocast runs matmul below Float.
struct ScoresImpl : torch::nn::Module {
  explicit ScoresImpl(at::ScalarType amp_dtype) : amp_dtype(amp_dtype) {
    q = register_module("q", torch::nn::Linear(8, 8));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    at::autocast::set_autocast_cpu_dtype(amp_dtype);
    at::autocast::set_cpu_enabled(true);
    auto h = q(x);
    auto scores = torch::matmul(h.to(torch::kFloat), h.transpose(0, 1));  // dtype-lint-expect: DL104
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    return scores;
  }
  at::ScalarType amp_dtype;
  torch::nn::Linear q{nullptr};
};
TORCH_MODULE(Scores);

// A norm computed in Float and cast back to its input's dtype restores that
// dtype: no attempt to run the next matmul in Float. A target cast down to a
// prediction's dtype before a loss autocast runs in Float still loses precision.
torch::Tensor rmsNormThenProject(const torch::Tensor& x, const torch::Tensor& w, torch::nn::Linear& proj) {
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  auto scaled = (x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6)).to(torch::kBFloat16);
  auto normed = (scaled * 2.0).to(x.scalar_type());
  auto out = proj(torch::matmul(normed, w));
  auto loss = torch::mse_loss(out, w.sum().expand_as(out).to(out.scalar_type()));  // dtype-lint-expect: DL104
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  return loss;
}

// `if (at::autocast::is_enabled()) return fused(x);`: the state decides the
// branch, so the full-precision path's cast never runs inside the region.
torch::Tensor adapterForward(const torch::Tensor& x, const torch::Tensor& w) {
  if (at::autocast::is_enabled()) return torch::matmul(x, w);
  const auto dt = w.scalar_type();
  return torch::matmul(x.to(dt), w);
}

torch::Tensor adapterUnderAutocast(const torch::Tensor& x) {
  auto w = torch::randn({8, 8});
  at::autocast::set_enabled(true);
  auto y = adapterForward(x.to(torch::kHalf), w);
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  return y;
}
