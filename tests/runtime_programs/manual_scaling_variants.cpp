// Loss multiplications the runtime hooks must tell apart: scaling for
// precision undone by hand with no inf/NaN check (DL203), the same with a
// check (a hand-written scaler: fine), and loss weights (fine).
#include <torch/torch.h>

int main() {
  torch::manual_seed(0);
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto loss_of = [&] { return model(torch::randn({4, 8})).pow(2).mean(); };

  // A loss weight: nothing is undone, the factor is small.
  optimizer.zero_grad();
  (loss_of() * 0.5).backward();
  optimizer.step();

  // Scaled, divided back, no check: DL203.
  const double scale = 512.0;
  optimizer.zero_grad();
  (loss_of() * scale).backward();  // dtype-lint-expect: DL203
  for (auto& p : model->parameters()) p.mutable_grad().div_(scale);
  optimizer.step();

  // Scaled, divided back, and checked for inf/NaN before stepping.
  optimizer.zero_grad();
  (loss_of() * scale).backward();
  bool finite = true;
  for (auto& p : model->parameters()) {
    p.mutable_grad().mul_(1.0 / scale);
    finite = finite && torch::isfinite(p.grad()).all().item<bool>();
  }
  if (finite) optimizer.step();

  // A small weight divided back (a hand-rolled scale of 4): still DL203.
  optimizer.zero_grad();
  (4 * loss_of()).backward();  // dtype-lint-expect: DL203
  for (auto& p : model->parameters()) p.mutable_grad().div_(4);
  optimizer.step();
  return 0;
}
