// A DataLoader's pattern: worker processes are forked while other threads are
// inside LibTorch ops, and so inside the hooks, holding their locks. Each
// child runs an op the hooks check; none may hang. Exit 0 when every child
// ended by itself, 1 when one had to be killed.
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

std::atomic<bool> stop{false};

void busy() {
  const auto half = torch::randn({2, 4}, torch::kHalf), weights = torch::randn({4, 4});
  while (!stop) {
    torch::randn({4, 8}, torch::kHalf).norm();  // dtype-lint-expect: DL105
    try {
      half.mm(weights);  // dtype-lint-expect: DL101
    } catch (const c10::Error&) {
    }
  }
}

// Waits up to 20 s for the child; kills it if it is still there.
bool endedByItself(pid_t child) {
  for (int i = 0; i < 2000; ++i) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return false;
}

int main() {
  torch::set_num_threads(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(busy);
  int hung = 0;
  for (int worker = 0; worker < 24; ++worker) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const pid_t child = fork();
    if (child == 0) {
      torch::randn({2, 4}, torch::kHalf).norm();  // dtype-lint-expect: DL105
      _exit(0);
    }
    if (!endedByItself(child)) ++hung;
  }
  stop = true;
  for (auto& t : threads) t.join();
  std::printf("%d of 24 workers hung\n", hung);
  return hung ? 1 : 0;
}
