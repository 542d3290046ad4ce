// The cost per dispatched op that a GPU step pays in full: tiny CPU ops (a
// GPU op's CPU side is microseconds), in a loop, timed per kind of op. Run
// plain and under the hooks by bench/op_overhead.sh, which prints the
// difference in ns per op. Prints "<kind> <ns per op>" lines. A second
// argument runs that kind only (to profile it).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

// The median over `rounds` of the mean ns per op of `ops` ops.
double nsPerOp(const std::function<void()>& op, int ops, int rounds) {
  std::vector<double> means;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ops; ++i) op();
    means.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / ops);
  }
  std::nth_element(means.begin(), means.begin() + rounds / 2, means.end());
  return means[rounds / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int ops = argc > 1 ? std::atoi(argv[1]) : 20000;
  const std::string only = argc > 2 ? argv[2] : "";
  torch::set_num_threads(1);
  torch::NoGradGuard noGrad;  // the op's own cost; autograd's is the same with and without the hooks
  const auto m = torch::randn({4, 4}), v = torch::randn({4}), b = torch::randn({4, 4});
  torch::Tensor sink;
  const std::pair<const char*, std::function<void()>> kinds[] = {
      {"add", [&] { sink = m.add(b); }},  // an op no rule watches
      {"mv", [&] { sink = torch::mv(m, v); }},  // the matmul family (DL101, DL305)
      {"softmax", [&] { sink = m.softmax(-1); }},  // precision-sensitive (DL105)
      {"mul_", [&] { sink = sink.mul_(1.0); }},  // in-place (DL102, DL203)
      {"view", [&] { sink = m.view({16}); }},  // no kernel at all
  };
  sink = m.clone();
  for (const auto& [name, op] : kinds) {
    if (!only.empty() && only != name) continue;
    nsPerOp(op, ops / 10, 1);  // warm-up
    std::printf("%s %.1f\n", name, nsPerOp(op, ops, 5));
  }
  return 0;
}
