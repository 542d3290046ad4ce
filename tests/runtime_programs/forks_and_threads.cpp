// Findings from worker threads and from a forked child all reach the report.
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <thread>

void mismatch_in_thread() {
  try {
    torch::randn({2, 4}, torch::kBFloat16).mm(torch::randn({4, 4}));  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
  }
}

void half_norm_in_thread() {
  torch::randn({2, 4}, torch::kHalf).norm();  // dtype-lint-expect: DL105
}

int main() {
  std::thread first(mismatch_in_thread), second(half_norm_in_thread);
  first.join();
  second.join();
  const pid_t child = fork();
  if (child == 0) {
    auto loss = torch::randn({4}, torch::kHalf).requires_grad_().sum();  // dtype-lint-expect: DL105
    loss.backward();  // dtype-lint-expect: DL106
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
