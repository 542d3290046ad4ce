// The dtype-lint executable as a user's shell runs it, for the CLI's tests: a
// command line, a scratch directory per test, the shape of a tool error.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "run_command.h"

namespace dtype_lint::testing {

inline CommandResult dtypeLint(const std::string& args) { return runCommand(std::string(DTYPE_LINT_EXE) + " " + args); }

inline size_t lineCount(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

// Bad input: one line on stderr, exit code 2.
inline void expectToolError(const CommandResult& run, const std::string& needle) {
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_EQ(lineCount(run.err), 1u) << run.err;
  EXPECT_EQ(run.err.rfind("dtype-lint: error: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(needle), std::string::npos) << run.err;
}

// Writes `text` to `path`, making its directories; the path.
inline std::string writeFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("dtype_lint_cli_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) { return writeFile(dir_ / name, text); }
  std::filesystem::path dir_;
};

}  // namespace dtype_lint::testing
