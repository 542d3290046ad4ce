// Where the dtype flow stops early, it says so: one note per function and
// reason, at the function's name. The limits are lowered so that small code
// reaches them.
#include <gtest/gtest.h>

#include "dtype_flow.h"
#include "clang/Tooling/Tooling.h"

namespace dtype_lint::testing {
namespace {

std::vector<Note> truncationsOf(const std::string& code, const analyzer::AnalysisLimits& limits) {
  std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(code, {"-std=c++17"}, "train.cpp");
  if (!ast) {
    ADD_FAILURE() << "the code does not parse";
    return {};
  }
  return analyzer::analyzeDtypeFlow(ast->getASTContext(), TorchVersion{}, analyzer::ScalerApi{}, limits).truncations;
}

std::vector<std::string> messages(const std::vector<Note>& notes) {
  std::vector<std::string> out;
  for (const Note& n : notes) out.push_back(n.message);
  return out;
}

constexpr const char* kLoop = R"(
int train_step(int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += i;
  return total;
}
)";

TEST(Truncation, ALoopBlockVisitedTooOftenStopsTheFunctionsAnalysis) {
  EXPECT_TRUE(truncationsOf(kLoop, {}).empty());
  analyzer::AnalysisLimits limits;
  limits.maxBlockVisits = 1;
  const std::vector<Note> notes = truncationsOf(kLoop, limits);
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(messages(notes));
  EXPECT_EQ(notes[0].message,
            "analysis of 'train_step' stopped early: a block was visited more than 1 times (loops, or "
            "branches nested deeply)");
  EXPECT_EQ(notes[0].location.line, 2u);
  EXPECT_EQ(notes[0].location.column, 5u);
}

constexpr const char* kCalls = R"(
void helper() {}
void step() { helper(); helper(); }
)";

TEST(Truncation, CallsDeeperThanTheLimitAreNotFollowed) {
  EXPECT_TRUE(truncationsOf(kCalls, {}).empty());
  analyzer::AnalysisLimits limits;
  limits.maxCallDepth = 0;
  const std::vector<Note> notes = truncationsOf(kCalls, limits);
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(messages(notes));  // once for both calls
  EXPECT_EQ(notes[0].message, "calls deeper than 0 levels are not followed (from 'step')");
  EXPECT_EQ(notes[0].location.line, 3u);
}

TEST(Truncation, TheFilesBudgetSpentLeavesFunctionsUnanalyzed) {
  analyzer::AnalysisLimits limits;
  limits.functionBudget = 1;
  const std::vector<Note> notes = truncationsOf(kCalls, limits);
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(messages(notes));
  EXPECT_EQ(notes[0].message, "the per-file budget of 1 function analyses was spent at 'helper': it and the "
                              "functions reached after it have no findings");
  EXPECT_EQ(notes[0].location.line, 2u);
}

// Said once, however many functions it leaves out.
TEST(Truncation, TheFilesBudgetIsSaidOnce) {
  analyzer::AnalysisLimits limits;
  limits.functionBudget = 1;
  const std::vector<Note> notes = truncationsOf("void a() {}\nvoid b() {}\nvoid c() {}\nvoid d() {}\n", limits);
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(messages(notes));
  EXPECT_EQ(notes[0].location.line, 2u);
}

TEST(Truncation, ASpentUnitBudgetStopsTheFileWithOneNote) {
  analyzer::UnitBudget budget;
  budget.memoryBytes = 1;  // any AST is over it
  const analyzer::UnitBudget::Clock clock = budget.start();
  analyzer::AnalysisLimits limits;
  limits.unitBudget = &clock;
  const std::vector<Note> notes = truncationsOf(kCalls, limits);
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(messages(notes));  // not one per function
  EXPECT_NE(notes[0].message.find("the file's analysis stopped at '"), std::string::npos) << notes[0].message;
  EXPECT_NE(notes[0].message.find("its memory budget of 0 MiB"), std::string::npos) << notes[0].message;
}

}  // namespace
}  // namespace dtype_lint::testing
