// A scaler the analyzer cannot recognize by name announces its transitions
// with dtype_lint/annotate.h; findings land on the user's call, as at runtime.
#include <torch/torch.h>

#include "dtype_lint/annotate.h"

class AmpHelper {
 public:
  torch::Tensor scale(const torch::Tensor& loss) {
    auto scaled = loss * factor_;
    dtype_lint::annotate::scale(this, scaled);
    return scaled;
  }
  void unscale(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::unscale(this, &optimizer);
    for (auto& group : optimizer.param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) p.mutable_grad().mul_(1.0 / factor_);
  }
  void finish(torch::optim::Optimizer& optimizer) {
    dtype_lint::annotate::step(this, &optimizer);
    optimizer.step();
    dtype_lint::annotate::update(this);
  }

 private:
  double factor_ = 1024.0;
};

void train() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  AmpHelper amp;
  for (int i = 0; i < 2; ++i) {
    amp.scale(model(torch::randn({2, 4})).sum()).backward();
    amp.unscale(opt);
    amp.unscale(opt);  // dtype-lint-expect: DL201:5 {{gradients of 'opt' unscaled again before 'amp'.update()}}
    amp.finish(opt);
  }
}

// The announced scale() is what makes a backward scaled.
void scales_the_loss() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  AmpHelper amp;
  for (int i = 0; i < 2; ++i) {
    amp.scale(model(torch::randn({2, 4})).sum()).backward();
    amp.finish(opt);
  }
}

void forgets_to_scale_the_loss() {
  torch::nn::Linear model(4, 1);
  torch::optim::SGD opt(model->parameters(), 0.1);
  AmpHelper amp;
  for (int i = 0; i < 2; ++i) {
    model(torch::randn({2, 4})).sum().backward();
    amp.finish(opt);  // dtype-lint-expect: DL207:5 {{'amp'.step('opt') but this iteration's backward() ran on the unscaled loss}}
  }
}
