// Flags, loops, early exits and recursion: the flow's fixpoint and limits.
namespace torch {
enum Dtype { kHalf, kFloat };
struct Tensor { Tensor to(Dtype) const; Tensor mm(const Tensor&) const; bool isfinite() const; };
Tensor zeros(int, Dtype = kFloat);
}
bool use_half(int argc) { return argc > 2; }
torch::Tensor chain(torch::Tensor t, int depth) { return depth == 0 ? t : chain(t.mm(t), depth - 1); }
int main(int argc, char**) {
  auto w = torch::zeros(4);
  auto x = torch::zeros(4);
  for (int i = 0; i < argc; ++i) {
    if (use_half(argc)) x = x.to(torch::kHalf);
    else x = x.to(torch::kFloat);
    while (i % 3) { w = w.mm(x); if (!w.isfinite()) break; ++i; }
    switch (i) { case 1: continue; case 2: return 1; default: x = chain(x, 5); }
  }
  return 0;
}
