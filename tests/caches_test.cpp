// The caches must never change what is reported: the same findings from a
// plain parse, from a parse on the LibTorch preamble PCH, from the result
// cache, and after either cache went stale.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "analysis.h"
#include "caches.h"
#include "compilation.h"
#include "dtype_lint/report.h"
#include "tool_flags.h"

namespace dtype_lint::testing {
namespace {

namespace fs = std::filesystem;

struct Analysis {
  std::vector<std::string> findings;  // JSON lines, in report order
  unsigned compileErrors = 0;
};

Analysis analyzeDirs(const std::vector<std::string>& dirs, const std::string& buildDir, const std::string& cacheDir,
                     bool usePreamble, bool useResultCache) {
  Analysis out;
  auto work = analyzer::selectWork(dirs, buildDir);
  if (!work) {
    ADD_FAILURE() << llvm::toString(work.takeError());
    return out;
  }
  analyzer::AnalysisOptions options;
  options.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto configs = analyzer::configsFor(work->files, "");
  if (!configs) {
    ADD_FAILURE() << llvm::toString(configs.takeError());
    return out;
  }
  options.configs = std::move(*configs);
  options.cacheDirectory = cacheDir;
  options.usePreamble = usePreamble;
  options.useResultCache = useResultCache;
  const auto result = analyzer::analyze(*work->database, work->files, options);
  for (const Finding& f : result.findings) out.findings.push_back(findingToJsonLine(f));
  for (const auto& unit : result.units) out.compileErrors += unit.compileErrors;
  return out;
}

fs::path freshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dtype_lint_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::map<fs::path, fs::file_time_type> filesIn(const fs::path& dir) {
  std::map<fs::path, fs::file_time_type> out;
  if (fs::exists(dir))
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file()) out[entry.path()] = entry.last_write_time();
  return out;
}

// Samples of each analysis the caches must carry: dtype flow with notes, the
// scaler protocol through a shared header with a fix, a custom backward, the
// precision profile. Their buggy programs only: the plain run parses all of
// LibTorch for each (about 16 s of CPU), and a fixed twin adds no kind of finding.
std::vector<std::string> cachedSamples() {
  std::vector<std::string> files;
  for (const char* name : {"DL101_mixed_dtype_matmul", "DL103_autocast_free_backward", "DL205_clip_before_unscale",
                           "DL305_precision_profile"})
    files.push_back(std::string(DTYPE_LINT_SOURCE_DIR) + "/samples/" + name + "/buggy.cpp");
  return files;
}

// The small projects below include the one LibTorch header they use: their
// preamble PCH is built in seconds, where <torch/torch.h>'s takes most of a minute.
constexpr const char* kTensorHeader = "#include <ATen/core/Tensor.h>\n";

TEST(Caches, TheSamplesReportTheSameWithAndWithoutEitherCache) {
  const std::vector<std::string> samples = cachedSamples();
  const fs::path cache = freshDir("caches");
  const Analysis plain = analyzeDirs(samples, DTYPE_LINT_BINARY_DIR, "", false, false);
  ASSERT_FALSE(plain.findings.empty());
  EXPECT_EQ(plain.compileErrors, 0u);

  const Analysis cold = analyzeDirs(samples, DTYPE_LINT_BINARY_DIR, cache, true, true);
  EXPECT_EQ(cold.findings, plain.findings);
  EXPECT_EQ(cold.compileErrors, 0u);
  EXPECT_FALSE(filesIn(cache / "preambles").empty()) << "no preamble was built";

  const auto stored = filesIn(cache / "results");
  ASSERT_FALSE(stored.empty());
  const Analysis warm = analyzeDirs(samples, DTYPE_LINT_BINARY_DIR, cache, true, true);
  EXPECT_EQ(warm.findings, plain.findings);
  EXPECT_EQ(filesIn(cache / "results"), stored) << "an unchanged TU was analyzed again";
  fs::remove_all(cache);
}

// A small project of its own, so that the test can edit its files.
struct Project {
  fs::path dir = freshDir("project");
  fs::path cache = dir / "cache";

  Project() {
    std::ofstream(dir / "train.cpp") << kTensorHeader << "#include \"loss.h\"\n"
                                     << "void train(at::Tensor x) { loss_of(x).backward(); }\n";
    writeHeader(/*half=*/true);
    std::string flags;
    for (const std::string& flag : analyzer::fallbackFlags()) flags += "\"" + flag + "\", ";
    std::ofstream(dir / "compile_commands.json")
        << "[{\"directory\": \"" << dir.string() << "\", \"file\": \"train.cpp\", \"arguments\": [\"c++\", " << flags
        << "\"-c\", \"train.cpp\"]}]";
  }
  ~Project() { fs::remove_all(dir); }

  void writeHeader(bool half) {
    std::ofstream(dir / "loss.h") << "#pragma once\n"
                                  << kTensorHeader << "inline at::Tensor loss_of(at::Tensor x) { return x.sum().to("
                                  << (half ? "at::kHalf" : "at::kFloat") << "); }\n";
  }
  Analysis analyze(bool useResultCache = true) {
    return analyzeDirs({dir.string()}, dir.string(), cache.string(), true, useResultCache);
  }
};

TEST(Caches, AChangedUserHeaderIsAnalyzedAgain) {
  Project project;
  const Analysis half = project.analyze();
  ASSERT_EQ(half.findings.size(), 1u);
  EXPECT_NE(half.findings[0].find("DL106"), std::string::npos) << half.findings[0];
  project.writeHeader(/*half=*/false);
  EXPECT_TRUE(project.analyze().findings.empty()) << "a stale result came back from the cache";
}

// A function defined in another file of the run: the caller's finding comes
// from analyzing the two together, and goes when the callee's file changes.
TEST(Caches, ACallersFindingFollowsTheFileDefiningItsCallee) {
  const fs::path dir = freshDir("linked");
  std::ofstream(dir / "loss.h") << "#pragma once\n" << kTensorHeader << "at::Tensor loss_of(at::Tensor x);\n";
  auto writeCallee = [&](const char* dtype) {
    std::ofstream(dir / "loss.cpp") << "#include \"loss.h\"\n"
                                    << "at::Tensor loss_of(at::Tensor x) { return x.sum().to(" << dtype << "); }\n";
  };
  writeCallee("at::kHalf");
  std::ofstream(dir / "train.cpp") << "#include \"loss.h\"\n"
                                   << "void train(at::Tensor x) { loss_of(x).backward(); }\n";
  std::string flags;
  for (const std::string& flag : analyzer::fallbackFlags()) flags += "\"" + flag + "\", ";
  std::ofstream(dir / "compile_commands.json")
      << "[{\"directory\": \"" << dir.string() << "\", \"file\": \"train.cpp\", \"arguments\": [\"c++\", " << flags
      << "\"-c\", \"train.cpp\"]},\n {\"directory\": \"" << dir.string()
      << "\", \"file\": \"loss.cpp\", \"arguments\": [\"c++\", " << flags << "\"-c\", \"loss.cpp\"]}]";
  const std::string cache = (dir / "cache").string();
  const Analysis half = analyzeDirs({dir.string()}, dir.string(), cache, true, true);
  ASSERT_EQ(half.findings.size(), 1u) << ::testing::PrintToString(half.findings);
  EXPECT_NE(half.findings[0].find("DL106"), std::string::npos) << half.findings[0];
  EXPECT_NE(half.findings[0].find("train.cpp\",\"line\":2"), std::string::npos) << half.findings[0];
  EXPECT_EQ(analyzeDirs({dir.string()}, dir.string(), cache, true, true).findings, half.findings);
  writeCallee("at::kFloat");
  EXPECT_TRUE(analyzeDirs({dir.string()}, dir.string(), cache, true, true).findings.empty())
      << "the caller's result came back from the cache after its callee's file changed";
  fs::remove_all(dir);
}

TEST(Caches, AStalePreambleIsRebuiltWithTheSameFindings) {
  Project project;
  const Analysis first = project.analyze(/*useResultCache=*/false);
  ASSERT_EQ(first.findings.size(), 1u);
  const auto preambles = filesIn(project.cache / "preambles");
  ASSERT_EQ(preambles.size(), 2u);  // the header and its PCH
  // The PCH records its inputs' modification times: a header it was built
  // from that changed since makes clang refuse to load it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (const auto& [path, time] : preambles)
    if (path.extension() == ".h") fs::last_write_time(path, fs::file_time_type::clock::now());
  const Analysis again = project.analyze(/*useResultCache=*/false);
  EXPECT_EQ(again.findings, first.findings);
  EXPECT_EQ(again.compileErrors, 0u);
  for (const auto& [path, time] : filesIn(project.cache / "preambles"))
    if (path.extension() == ".pch") EXPECT_NE(time, preambles.at(path)) << "the stale PCH was not rebuilt";
}

TEST(Caches, OnlyTheLibTorchHeadersBeforeAnyUserCodeFormThePreamble) {
  EXPECT_EQ(analyzer::libTorchIncludePrefix("// comment\n#pragma once\n#include <torch/torch.h>\n#include "
                                            "<vector>\n/* a\n block */\n#include <ATen/ATen.h>\nint x;\n"
                                            "#include <c10/util/Half.h>\n"),
            (std::vector<std::string>{"torch/torch.h", "ATen/ATen.h"}));
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#define TORCH_SOMETHING 1\n#include <torch/torch.h>\n"),
            std::vector<std::string>{});
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#include \"config.h\"\n#include <torch/torch.h>\n"),
            std::vector<std::string>{});
}

// trainer.cpp starting with its own "trainer.h", which starts with LibTorch:
// the preamble covers those headers. Only the file's first include counts.
TEST(Caches, TheFilesOwnHeaderFirstContributesItsLibTorchPrefix) {
  const analyzer::UserHeaderReader read = [](llvm::StringRef quoted) -> std::optional<std::string> {
    if (quoted == "trainer.h")
      return std::string("#pragma once\n#include <torch/torch.h>\n#include <vector>\nstruct T {};\n");
    if (quoted == "macros.h") return std::string("#define TORCH_SOMETHING 1\n");
    return std::nullopt;
  };
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#include \"trainer.h\"\n#include <ATen/ATen.h>\nint x;\n", read),
            std::vector<std::string>{"torch/torch.h"});
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#include \"macros.h\"\n#include <torch/torch.h>\n", read),
            std::vector<std::string>{});
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#include <vector>\n#include \"trainer.h\"\n", read),
            std::vector<std::string>{});
  EXPECT_EQ(analyzer::libTorchIncludePrefix("#include \"missing.h\"\n#include <torch/torch.h>\n", read),
            std::vector<std::string>{});
}

// Two targets of one project: other directories, other optimization, debug
// and warning flags, relative include paths. Their LibTorch headers see the
// same options, so they share one PCH, and report what a plain parse does.
TEST(Caches, TargetsDifferingInCodegenFlagsShareOnePreamble) {
  const fs::path dir = freshDir("targets");
  fs::create_directories(dir / "app");
  fs::create_directories(dir / "lib");
  fs::create_directories(dir / "include");
  std::ofstream(dir / "include" / "model.h")
      << "#pragma once\n"
      << kTensorHeader << "inline at::Tensor halve(at::Tensor x) { return x.to(at::kHalf); }\n";
  std::ofstream(dir / "app" / "main.cpp") << "#include \"model.h\"\n"
                                             "void train(at::Tensor x) { halve(x).sum().backward(); }\n";
  std::ofstream(dir / "lib" / "step.cpp")
      << kTensorHeader << "void step(at::Tensor x) { x.to(at::kHalf).sum().backward(); }\n";
  std::string flags;
  for (const std::string& flag : analyzer::fallbackFlags()) flags += "\"" + flag + "\", ";
  std::ofstream(dir / "compile_commands.json")
      << "[{\"directory\": \"" << (dir / "app").string() << "\", \"file\": \"main.cpp\", \"arguments\": [\"c++\", "
      << flags << "\"-I../include\", \"-O2\", \"-g\", \"-fPIC\", \"-Wall\", \"-c\", \"main.cpp\"]},\n"
      << " {\"directory\": \"" << (dir / "lib").string() << "\", \"file\": \"step.cpp\", \"arguments\": [\"c++\", "
      << flags << "\"-I\", \"" << (dir / "include").string() << "\", \"-O0\", \"-Wextra\", \"-c\", \"step.cpp\"]}]";
  const Analysis plain = analyzeDirs({dir.string()}, dir.string(), "", false, false);
  // A Half sum (DL105) taken as the loss (DL106), in each target.
  ASSERT_EQ(plain.findings.size(), 4u) << ::testing::PrintToString(plain.findings);
  const Analysis shared = analyzeDirs({dir.string()}, dir.string(), (dir / "cache").string(), true, false);
  EXPECT_EQ(shared.findings, plain.findings);
  EXPECT_EQ(shared.compileErrors, 0u);
  unsigned pchs = 0;
  for (const auto& [path, time] : filesIn(dir / "cache" / "preambles")) pchs += path.extension() == ".pch";
  EXPECT_EQ(pchs, 1u);
  fs::remove_all(dir);
}

// The preamble cache stays under its size limit: the least recently used
// PCHs go first, the one just built never.
TEST(Caches, PreamblesBeyondTheSizeLimitAreEvictedLeastRecentlyUsedFirst) {
  const fs::path dir = fs::temp_directory_path() / ("dtype_lint_evict_" + std::to_string(::getpid()));
  fs::create_directories(dir / "preambles");
  const auto now = fs::file_time_type::clock::now();
  int age = 3;
  for (const char* name : {"old", "middle", "new"}) {
    std::ofstream(dir / "preambles" / (std::string(name) + ".pch")) << std::string(1000, 'x');
    std::ofstream(dir / "preambles" / (std::string(name) + ".h")) << "#include <torch/torch.h>\n";
    fs::last_write_time(dir / "preambles" / (std::string(name) + ".pch"), now - std::chrono::hours(age--));
  }
  analyzer::evictLeastRecentlyUsedPchs(dir.string(), 2000, (dir / "preambles" / "old.pch").string());
  EXPECT_TRUE(fs::exists(dir / "preambles" / "old.pch")) << "the PCH in use is kept";
  EXPECT_FALSE(fs::exists(dir / "preambles" / "middle.pch"));
  EXPECT_FALSE(fs::exists(dir / "preambles" / "middle.h"));
  EXPECT_TRUE(fs::exists(dir / "preambles" / "new.pch"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dtype_lint::testing
