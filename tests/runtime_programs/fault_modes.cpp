// One LibTorch program, many ways to end: the hooks must change none of them
// (stdout, stderr, exit status, signal) and keep the finding made before.
// argv[1] picks the ending.
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

void caught_mismatch() {
  try {
    torch::randn({2, 4}, torch::kHalf).mm(torch::randn({4, 4}));  // dtype-lint-expect: DL101
  } catch (const c10::Error&) {
  }
}

void half_norm() {
  torch::randn({2, 4}, torch::kHalf).norm();  // dtype-lint-expect: DL105
}

int main(int argc, char** argv) {
  const std::string ending = argc > 1 ? argv[1] : "return";
  std::cout << "step 1 of " << ending << std::endl;
  std::cerr << "stderr before " << ending << std::endl;
  caught_mismatch();
  std::cout << "buffered, unflushed output " << ending << "\n";  // lost on abort and signals, with or without hooks

  if (ending == "return") return 3;
  if (ending == "exit") std::exit(4);
  if (ending == "_exit") {
    std::fflush(stdout);
    _exit(5);
  }
  if (ending == "exception") throw std::runtime_error("an exception nobody catches");
  if (ending == "abort") std::abort();
  if (ending == "segv") {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  }
  if (ending == "sigterm") std::raise(SIGTERM);
  if (ending == "sigkill") std::raise(SIGKILL);
  if (ending == "exit-from-thread") {
    std::thread([] {
      half_norm();
      std::exit(6);
    }).join();
  }
  if (ending == "execve") {
    std::cout.flush();
    char* const args[] = {const_cast<char*>("/bin/echo"), const_cast<char*>("after execve"), nullptr};
    execve("/bin/echo", args, environ);
    return 99;
  }
  if (ending == "fork") {
    std::cout.flush();
    const pid_t child = fork();
    if (child == 0) {
      half_norm();
      std::cout << "child done" << std::endl;
      std::exit(8);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::cout << "child status " << WEXITSTATUS(status) << std::endl;
    return 0;
  }
  if (ending == "vfork") {
    std::cout.flush();
    const pid_t child = vfork();
    if (child == 0) {
      execl("/bin/echo", "/bin/echo", "vforked child", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::cout << "child status " << WEXITSTATUS(status) << std::endl;
    return 0;
  }
  if (ending == "daemon") {
    std::cout.flush();
    // The original process ends here with 0; the daemon goes on detached.
    if (daemon(/*nochdir=*/1, /*noclose=*/1) != 0) return 98;
    half_norm();
    _exit(0);
  }
  std::cerr << "unknown ending " << ending << std::endl;
  return 2;
}
