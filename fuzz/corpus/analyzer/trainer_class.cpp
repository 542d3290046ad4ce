// A Trainer owning model, optimizer and scaler; the API it uses declared here.
#include <vector>
namespace c10 { enum class ScalarType { Half, BFloat16, Float }; }
namespace torch {
constexpr auto kHalf = c10::ScalarType::Half;
constexpr auto kBFloat16 = c10::ScalarType::BFloat16;
constexpr auto kFloat = c10::ScalarType::Float;
struct Tensor {
  Tensor to(c10::ScalarType) const;
  Tensor mm(const Tensor&) const;
  Tensor sum() const;
  void backward() const;
  Tensor& mul_(double);
};
Tensor randn(std::vector<long>, c10::ScalarType = kFloat);
Tensor matmul(const Tensor&, const Tensor&);
Tensor softmax(const Tensor&, long);
namespace nn { struct Linear { Linear(long, long); Tensor forward(const Tensor&); }; }
namespace optim { struct SGD { void step(); void zero_grad(); }; }
}  // namespace torch

struct Config { int steps = 10; bool half = true; float lr = 0.01f; };

class Trainer {
 public:
  explicit Trainer(Config c) : config_(c), layer_(16, 4) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto input = config_.half ? x.to(torch::kHalf) : x;
    return layer_.forward(input);
  }
  void step(const torch::Tensor& x) {
    optimizer_.zero_grad();
    auto loss = torch::softmax(forward(x), 1).sum();
    loss.mul_(1024.0);
    loss.backward();
    optimizer_.step();
  }
  void run() {
    for (int i = 0; i < config_.steps; ++i) step(torch::randn({8, 16}));
  }

 private:
  Config config_;
  torch::nn::Linear layer_;
  torch::optim::SGD optimizer_;
};

int main() {
  Trainer trainer(Config{});
  trainer.run();
  auto a = torch::randn({4, 4}, torch::kBFloat16);
  auto b = torch::randn({4, 4});
  auto c = torch::matmul(a, b);
  auto lambda = [&](torch::Tensor t) { return t.mm(b); };
  lambda(a.to(torch::kFloat));
}
