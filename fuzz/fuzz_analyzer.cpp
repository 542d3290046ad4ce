// The analyzer on C++ it has never seen: any text, parsed as a training
// program, is analyzed to the end (findings, notes) or stops at its compile
// errors, within its limits. Seeds: training loops with the LibTorch API they
// use declared in the file (fuzz/corpus/analyzer/).
#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype_flow.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string code(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(
      code, {"-std=c++17", "-ferror-limit=20", "-fconstexpr-steps=100000", "-ftemplate-depth=64"}, "train.cpp");
  if (!ast) return 0;
  dtype_lint::analyzer::UnitBudget budget;
  budget.seconds = 5;
  const dtype_lint::analyzer::UnitBudget::Clock clock = budget.start();
  dtype_lint::analyzer::AnalysisLimits limits;
  limits.unitBudget = &clock;
  dtype_lint::analyzer::analyzeDtypeFlow(ast->getASTContext(), dtype_lint::TorchVersion{2, 5},
                                         dtype_lint::analyzer::Config{}.scaler, limits);
  return 0;
}
