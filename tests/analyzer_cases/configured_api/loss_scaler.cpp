// A scaler API other than GradScaler's, named in .dtype-lint.yaml beside this file.
#include <torch/torch.h>

class LossScaler {
 public:
  torch::Tensor Scale(const torch::Tensor& loss) { return loss * factor_; }
  void Unscale(torch::optim::Optimizer& optimizer) {
    for (auto& group : optimizer.param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) p.mutable_grad().mul_(1.0 / factor_);
  }
  void Step(torch::optim::Optimizer& optimizer) { optimizer.step(); }
  void Update() {}

 private:
  double factor_ = 1024.0;
};

void train() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  LossScaler scaler;
  for (int i = 0; i < 2; ++i) {
    scaler.Scale(model(torch::randn({2, 4})).sum()).backward();
    scaler.Unscale(opt);
    scaler.Unscale(opt);  // dtype-lint-expect: DL201:5 {{gradients of 'opt' unscaled again before 'scaler'.update()}}
    scaler.Step(opt);
    scaler.Update();
  }
}

// A class the config does not name is not a scaler: nothing to report.
struct Other {
  void Unscale(torch::optim::Optimizer&) {}
};

void not_a_scaler() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  Other other;
  other.Unscale(opt);
  other.Unscale(opt);
}
