// Threads train at once under the hooks, each planting its own findings at its
// own lines: every one must be reported once, nothing may deadlock, and the
// hooks' memory must not grow with the steps. On stderr: the resident set
// after the first tenth of the steps and at the end, for the memory test.
// argv: threads steps
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

long residentKiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4;
}

// A mismatched matmul (which LibTorch refuses) and a Half pow, on the thread's own line.
void plant(int thread, const torch::Tensor& half, const torch::Tensor& weights, const torch::Tensor& low) {
  try {
    switch (thread % 8) {
      case 0: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 1: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 2: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 3: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 4: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 5: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 6: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
      case 7: low.pow(2); half.mm(weights); break;  // dtype-lint-expect: DL101, DL105
    }
  } catch (const c10::Error&) {
  }
}

void train(int thread, int steps) {
  torch::nn::Sequential model(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 4));
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const auto half = torch::randn({2, 4}, torch::kHalf), weights = torch::randn({4, 4});
  const auto low = torch::randn({2, 4}, torch::kHalf);
  for (int step = 0; step < steps; ++step) {
    const auto inputs = torch::randn({8, 16}), targets = torch::randn({8, 4});
    optimizer.zero_grad();
    const auto loss = torch::mse_loss(model->forward(inputs), targets);
    loss.backward();
    optimizer.step();
    if (step % 50 == 0) plant(thread, half, weights, low);
  }
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  torch::set_num_threads(1);  // the threads are the parallelism
  const int warmup = steps / 10;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(train, t, warmup);
  for (auto& w : workers) w.join();
  const long afterWarmup = residentKiB();
  workers.clear();
  for (int t = 0; t < threads; ++t) workers.emplace_back(train, t, steps - warmup);
  for (auto& w : workers) w.join();
  std::fprintf(stderr, "resident KiB: after warmup %ld, at the end %ld\n", afterWarmup, residentKiB());
  return 0;
}
