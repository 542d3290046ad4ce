// A loss chosen at run time by a factory and held through a pointer to its
// base class: the call runs one of the overrides the program defines, so each
// is followed with the caller's dtypes (a Half model's output). A hierarchy
// whose overrides upcast first has no finding.
#include <torch/torch.h>

#include <memory>
#include <string>

namespace virtual_factories {

class RegressionLoss {
 public:
  virtual ~RegressionLoss() = default;
  virtual torch::Tensor operator()(const torch::Tensor& pred, const torch::Tensor& target) const = 0;
};

class MseLoss : public RegressionLoss {
 public:
  torch::Tensor operator()(const torch::Tensor& pred, const torch::Tensor& target) const override {
    return torch::mse_loss(pred, target);  // dtype-lint-expect: DL105
  }
};

class HuberLoss : public RegressionLoss {
 public:
  torch::Tensor operator()(const torch::Tensor& pred, const torch::Tensor& target) const override {
    return torch::huber_loss(pred, target, at::Reduction::Mean, 1.0);  // dtype-lint-expect: DL105
  }
};

std::unique_ptr<RegressionLoss> make_loss(const std::string& name) {
  if (name == "huber") return std::make_unique<HuberLoss>();
  return std::make_unique<MseLoss>();
}

class HalfRegressor {
 public:
  explicit HalfRegressor(const std::string& loss) : net_(8, 1), loss_fn_(make_loss(loss)) { net_->to(torch::kHalf); }
  void step(const torch::Tensor& x, const torch::Tensor& y) {
    auto loss = loss_fn_->operator()(net_(x.to(torch::kHalf)), y.to(torch::kHalf));
    loss.backward();  // dtype-lint-expect: DL106
  }

 private:
  torch::nn::Linear net_;
  std::unique_ptr<RegressionLoss> loss_fn_;
};

// The same shape, with losses that compute in Float.
class Criterion {
 public:
  virtual ~Criterion() = default;
  virtual torch::Tensor compute(const torch::Tensor& pred, const torch::Tensor& target) const = 0;
};

class UpcastMse : public Criterion {
 public:
  torch::Tensor compute(const torch::Tensor& pred, const torch::Tensor& target) const override {
    return torch::mse_loss(pred.to(torch::kFloat), target.to(torch::kFloat));
  }
};

class UpcastL1 : public Criterion {
 public:
  torch::Tensor compute(const torch::Tensor& pred, const torch::Tensor& target) const override {
    return torch::l1_loss(pred.to(torch::kFloat), target.to(torch::kFloat));
  }
};

std::unique_ptr<Criterion> make_criterion(const std::string& name) {
  if (name == "l1") return std::make_unique<UpcastL1>();
  return std::make_unique<UpcastMse>();
}

class CarefulHalfRegressor {
 public:
  explicit CarefulHalfRegressor(const std::string& loss) : net_(8, 1), criterion_(make_criterion(loss)) {
    net_->to(torch::kHalf);
  }
  void step(const torch::Tensor& x, const torch::Tensor& y) {
    auto loss = criterion_->compute(net_(x.to(torch::kHalf)), y);
    loss.backward();
  }

 private:
  torch::nn::Linear net_;
  std::unique_ptr<Criterion> criterion_;
};

}  // namespace virtual_factories
