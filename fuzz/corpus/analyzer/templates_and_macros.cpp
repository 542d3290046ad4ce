// Templates, macros and a custom autograd function's shape.
#define STEP(opt) do { (opt).step(); } while (0)
namespace torch { struct Tensor { Tensor operator*(const Tensor&) const; Tensor to(int) const; }; struct SGD { void step(); }; }
template <typename T, int N> struct LoRA {
  static torch::Tensor forward(const T& a, const T& b) { return N > 0 ? a * b : a; }
  static torch::Tensor backward(const T& grad, const T& b) { torch::Tensor out; out = grad * b.to(N); return out; }
};
int main() {
  torch::Tensor a, b;
  auto y = LoRA<torch::Tensor, 2>::forward(a, b);
  LoRA<torch::Tensor, 0>::backward(y, a);
  torch::SGD sgd;
  STEP(sgd);
}
