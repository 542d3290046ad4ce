// The analyzer on real LibTorch code: every `dtype-lint-expect` marker in
// tests/analyzer_cases/ and samples/ must be found, at the column and with the
// message a marker pins, and nothing else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "analysis.h"
#include "compilation.h"
#include "expectations.h"

namespace dtype_lint::testing {
namespace {

// The build whose compile commands (and LibTorch) the cases are analyzed
// with: this one, or a satellite build's (DTYPE_LINT_TEST_BUILD_DIR), which
// compiles them against another LibTorch.
std::string buildDirectory() {
  const char* other = std::getenv("DTYPE_LINT_TEST_BUILD_DIR");
  return other && *other ? other : DTYPE_LINT_BINARY_DIR;
}

const analyzer::AnalysisResult& analysisOf(const std::string& dir) {
  static std::map<std::string, analyzer::AnalysisResult> results;
  auto it = results.find(dir);
  if (it != results.end()) return it->second;
  auto work = analyzer::selectWork({dir}, buildDirectory());
  if (!work) {
    ADD_FAILURE() << llvm::toString(work.takeError());
    return results[dir];
  }
  analyzer::AnalysisOptions options;
  options.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto configs = analyzer::configsFor(work->files, "");
  if (!configs) {
    ADD_FAILURE() << llvm::toString(configs.takeError());
    return results[dir];
  }
  options.configs = std::move(*configs);
  // LibTorch's headers from a preamble PCH; every TU analyzed (the caches' own
  // tests compare with plain parses).
  options.cacheDirectory = buildDirectory() + "/test-cache";
  options.useResultCache = false;
  return results[dir] = analyzer::analyze(*work->database, work->files, options);
}

std::string relativeName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::relative(info.param, DTYPE_LINT_SOURCE_DIR).string();
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

void expectMarkersMatch(const std::string& dir, const std::string& file) {
  const analyzer::AnalysisResult& result = analysisOf(dir);
  for (const auto& unit : result.units)
    if (unit.file == file) EXPECT_EQ(unit.compileErrors, 0u) << unit.firstError;
  const std::string diff =
      compare(checkedBy(FrontEnd::Static, readMarkers(file)), findingsIn(result.findings, file), file);
  EXPECT_TRUE(diff.empty()) << diff;
  const std::string pinDiff = comparePins(readPins(file), result.findings, file);
  EXPECT_TRUE(pinDiff.empty()) << pinDiff;
}

class AnalyzerCases : public ::testing::TestWithParam<std::string> {};
TEST_P(AnalyzerCases, FindingsMatchMarkers) {
  expectMarkersMatch(std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases", GetParam());
}
INSTANTIATE_TEST_SUITE_P(Files, AnalyzerCases,
                         ::testing::ValuesIn(sourceFiles(std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases")),
                         relativeName);

class SamplesCorpus : public ::testing::TestWithParam<std::string> {};
TEST_P(SamplesCorpus, FindingsMatchMarkers) {
  expectMarkersMatch(std::string(DTYPE_LINT_SOURCE_DIR) + "/samples", GetParam());
}
INSTANTIATE_TEST_SUITE_P(Files, SamplesCorpus,
                         ::testing::ValuesIn(sourceFiles(std::string(DTYPE_LINT_SOURCE_DIR) + "/samples")),
                         relativeName);

TEST(SamplesCorpus, EveryImplementedStaticRuleHasABuggyAndAFixedSample) {
  const std::string samples = std::string(DTYPE_LINT_SOURCE_DIR) + "/samples";
  std::set<std::string> marked;
  for (const std::string& file : sourceFiles(samples))
    for (const auto& [line, rule] : readMarkers(file)) marked.insert(rule);
  for (const RuleInfo& rule : ruleCatalog()) {
    if (!rule.checkedStatically()) continue;
    EXPECT_TRUE(marked.count(std::string(rule.id))) << rule.id << " has no marked buggy sample";
  }
  for (const auto& entry : std::filesystem::directory_iterator(samples)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("DL", 0) != 0) continue;
    EXPECT_TRUE(std::filesystem::exists(entry.path() / "buggy.cpp")) << entry.path();
    EXPECT_TRUE(std::filesystem::exists(entry.path() / "fixed.cpp")) << entry.path();
    EXPECT_TRUE(readMarkers((entry.path() / "fixed.cpp").string()).empty()) << "fixed twins carry no markers";
  }
}

// What a finding says, beyond its line: dtypes, related places, call chains.
const Finding* findingAt(const std::string& file, unsigned line, std::string_view rule) {
  for (const Finding& f : analysisOf(std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases").findings)
    if (f.location.file == file && f.location.line == line && f.rule->id == rule) return &f;
  return nullptr;
}

const std::string kMessagesCase = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/messages.cpp";

TEST(AnalyzerMessages, MixedMatmulNamesBothDtypesAndWhereEachCameFrom) {
  const Finding* f = findingAt(kMessagesCase, lineOf(kMessagesCase, "auto logits = head(features);"), "DL101");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("input 'features': BFloat16"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("the parameters of 'head': Float"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("outside autocast"), std::string::npos) << f->message;
  ASSERT_EQ(f->notes.size(), 2u);
  EXPECT_EQ(f->notes[0].location.line, lineOf(kMessagesCase, "features = features.to(torch::kBFloat16);"));
  EXPECT_EQ(f->notes[0].message, "'features' became BFloat16 here");
  EXPECT_EQ(f->notes[1].location.line, lineOf(kMessagesCase, "torch::nn::Linear head(8, 2);"));
  EXPECT_EQ(f->location.column, 17u);
}

TEST(AnalyzerMessages, FindingInAHelperPointsAtTheCall) {
  const Finding* f = findingAt(kMessagesCase, lineOf(kMessagesCase, "return a.matmul(b);"), "DL101");
  ASSERT_NE(f, nullptr);
  ASSERT_FALSE(f->notes.empty());
  EXPECT_EQ(f->notes.back().location.line, lineOf(kMessagesCase, "auto scores = project(q, k);"));
  EXPECT_NE(f->notes.back().message.find("'project'"), std::string::npos);
}

// A Half model given a Float batch raises in a layer of a nested module: the
// call is reported, the layer and where each dtype came from are notes.
TEST(AnalyzerMessages, ModuleCalledWithAnInputOfAnotherDtypeIsReportedAtTheCall) {
  const std::string file = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/module_inputs.cpp";
  const Finding* f = findingAt(file, lineOf(file, "return model_->forward(batch);"), "DL101");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("'linear' in the module called here"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("input 'x': Float, the parameters of 'proj_': Half"), std::string::npos) << f->message;
  ASSERT_GE(f->notes.size(), 3u);
  EXPECT_EQ(f->notes[0].location.line, lineOf(file, "return head_(torch::gelu(proj_(x)));"));
  EXPECT_EQ(f->notes[0].message, "'linear' is here, in the module called");
  EXPECT_EQ(f->notes[1].location.line, lineOf(file, "predictor.predict(torch::rand({4, 16}));"));
  EXPECT_EQ(f->notes[2].location.line, lineOf(file, "model_->to(torch::kHalf);"));
  EXPECT_FALSE(f->fix) << "an edit of the module's forward would change it for every caller";
}

// The clip is in a lambda, the scaled backward in the helper that calls it:
// the call is out of order, the lambda's clip a note.
TEST(AnalyzerMessages, ProtocolFindingInALambdaIsReportedAtItsCall) {
  const std::string file = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/trainer_classes.cpp";
  const Finding* clip = findingAt(file, lineOf(file, "const double norm = clip_fn();"), "DL205");
  ASSERT_NE(clip, nullptr);
  ASSERT_GE(clip->notes.size(), 2u);
  const auto& notes = clip->notes;
  EXPECT_EQ(notes.front().message, "in the lambda here");
  EXPECT_EQ(notes.front().location.line,
            lineOf(file, "return torch::nn::utils::clip_grad_norm_(model->parameters(), max_norm);"));
  EXPECT_EQ(notes.back().message, "in the call to 'run_epoch_with_clip' from here");
}

TEST(AnalyzerMessages, OutDtypeMismatchNamesComputedAndDestinationDtypes) {
  const Finding* f = findingAt(kMessagesCase, lineOf(kMessagesCase, "at::mm_out(grad_buffer, g, x);"), "DL102");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("BFloat16 result into a Float destination 'grad_buffer'"), std::string::npos) << f->message;
}

TEST(AnalyzerMessages, CacheFindingSitsAtTheRegionExitAndPointsAtTheCastAndTheStep) {
  const Finding* f =
      findingAt(kMessagesCase, lineOf(kMessagesCase, "at::autocast::set_cpu_enabled(false);  // left"), "DL107");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("autocast disabled without at::autocast::clear_cache()"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("the optimizer step on 'optimizer'"), std::string::npos) << f->message;
  ASSERT_EQ(f->notes.size(), 2u);
  EXPECT_EQ(f->notes[0].location.line, lineOf(kMessagesCase, "auto y = net(x);  // cached"));
  EXPECT_EQ(f->notes[1].location.line, lineOf(kMessagesCase, "optimizer.step();  // stale"));
}

TEST(AnalyzerMessages, FindingOnAFlagsPathNamesTheFlagsValue) {
  const std::string file = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/runtime_flags.cpp";
  const Finding* clip = findingAt(file, lineOf(file, "cfg_.max_norm);  // dtype-lint-expect: DL205"), "DL205");
  ASSERT_NE(clip, nullptr);
  ASSERT_FALSE(clip->notes.empty());
  EXPECT_EQ(clip->notes.back().message, "assuming 'cfg_.use_amp' is true");
  EXPECT_EQ(clip->notes.back().location.line, lineOf(file, "if (cfg_.use_amp) {"));

  // A switch parsed with a constant write (`cfg.lookahead = true`) is a setting too.
  const Finding* update =
      findingAt(file, lineOf(file, "scaler_.update();  // dtype-lint-expect: DL210 (with --lookahead)"), "DL210");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->notes.back().message, "assuming 'cfg_.lookahead' is true");

  // An enum setting handed to helpers: one assumption, on the field, names the enumerator.
  const std::string settings = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/precision_settings.cpp";
  const Finding* softmax =
      findingAt(settings, lineOf(settings, "// dtype-lint-expect: DL105 (with Mode::kFp16)"), "DL105");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->notes.back().message, "assuming 'cfg.mode' is Mode::kFp16");

  // Whether the run has a GPU is a setting too, named as the program first
  // tests it, after the program's own settings.
  const Finding* gpu =
      findingAt(file, lineOf(file, "// dtype-lint-expect: DL107 (with CUDA and use_amp true)"), "DL107");
  ASSERT_NE(gpu, nullptr);
  ASSERT_GE(gpu->notes.size(), 2u);
  EXPECT_EQ(gpu->notes[gpu->notes.size() - 2].message, "assuming 'cfg.use_amp' is true");
  EXPECT_EQ(gpu->notes.back().message, "assuming 'torch::cuda::is_available()' is true");

  const std::string flow = std::string(DTYPE_LINT_SOURCE_DIR) + "/tests/analyzer_cases/autocast_cache.cpp";
  const Finding* stale =
      findingAt(flow, lineOf(flow, "set_cpu_enabled(false);  // dtype-lint-expect: DL107 (when clear"), "DL107");
  ASSERT_NE(stale, nullptr);
  EXPECT_EQ(stale->notes.back().message, "assuming 'clear' is false");
}

}  // namespace
}  // namespace dtype_lint::testing
