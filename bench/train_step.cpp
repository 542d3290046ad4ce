// A CPU training step of a small MLP, timed: the workload for the runtime
// hooks' overhead benchmark (bench/runtime_overhead.sh runs it with and
// without the hooks in one run).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  torch::manual_seed(0);
  torch::set_num_threads(1);
  torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                              torch::nn::ReLU(), torch::nn::Linear(512, 10));
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  auto x = torch::randn({64, 256});
  auto y = torch::randint(0, 10, {64});
  auto step = [&] {
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
  };
  for (int i = 0; i < 10; ++i) step();  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.6f\n", seconds / steps);
  return 0;
}
