// Report writers: clang-style text, JSON, SARIF 2.1.0 and fingerprints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dtype_lint/report.h"

namespace dtype_lint {
namespace {

class Reports : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("dtype_lint_report_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    file_ = (dir_ / "train.cpp").string();
    std::ofstream(file_) << "int main() {\n  auto y = fc(x);\n}\n";
    finding_.rule = findRule("DL101");
    finding_.severity = Severity::Error;
    finding_.message = "'linear' on operands of different dtypes outside autocast";
    finding_.location = SourceLocation{file_, 2, 12, 2, 16};
    finding_.notes.push_back(Note{SourceLocation{file_, 1, 1, 1, 3}, "'x' became Half here"});
    options_.baseDir = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string render(ReportFormat format, const std::vector<Note>& toolNotes = {}) {
    std::ostringstream out;
    SourceText source;
    writeReport(out, format, {finding_}, options_, source, toolNotes);
    return out.str();
  }

  std::filesystem::path dir_;
  std::string file_;
  Finding finding_;
  ReportOptions options_;
};

TEST_F(Reports, TextIsClangStyleWithSourceAndCaret) {
  const std::string text = render(ReportFormat::Text);
  EXPECT_NE(text.find("train.cpp:2:12: error: 'linear' on operands of different dtypes outside autocast "
                      "[DL101-mixed-dtype-matmul]\n  auto y = fc(x);\n           ^~~~~\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("train.cpp:1:1: note: 'x' became Half here"), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos) << "no color unless asked";
}

TEST_F(Reports, JsonCarriesRuleLocationAndNotes) {
  const auto json = nlohmann::json::parse(render(ReportFormat::Json));
  const auto& f = json.at("findings").at(0);
  EXPECT_EQ(f.at("rule"), "DL101");
  EXPECT_EQ(f.at("name"), "mixed-dtype-matmul");
  EXPECT_EQ(f.at("severity"), "error");
  EXPECT_EQ(f.at("location").at("file"), "train.cpp");
  EXPECT_EQ(f.at("location").at("line"), 2);
  EXPECT_EQ(f.at("notes").at(0).at("message"), "'x' became Half here");
}

TEST_F(Reports, SarifHasRuleMetadataRegionsAndRelatedLocations) {
  const auto sarif = nlohmann::json::parse(render(ReportFormat::Sarif));
  EXPECT_EQ(sarif.at("version"), "2.1.0");
  const auto& run = sarif.at("runs").at(0);
  const auto& rules = run.at("tool").at("driver").at("rules");
  ASSERT_EQ(rules.size(), ruleCatalog().size());
  EXPECT_EQ(rules.at(0).at("id"), "DL101");
  EXPECT_EQ(rules.at(0).at("name"), "mixed-dtype-matmul");
  for (const char* key : {"shortDescription", "fullDescription", "help"})
    EXPECT_FALSE(rules.at(0).at(key).at("text").get<std::string>().empty()) << key;
  const auto& result = run.at("results").at(0);
  EXPECT_EQ(result.at("ruleId"), "DL101");
  EXPECT_EQ(result.at("level"), "error");
  const auto& region = result.at("locations").at(0).at("physicalLocation").at("region");
  EXPECT_EQ(region.at("startLine"), 2);
  EXPECT_EQ(region.at("startColumn"), 12);
  EXPECT_EQ(region.at("endLine"), 2);
  EXPECT_EQ(region.at("endColumn"), 17);  // exclusive
  EXPECT_EQ(result.at("locations").at(0).at("physicalLocation").at("artifactLocation").at("uri"), "train.cpp");
  EXPECT_EQ(result.at("relatedLocations").at(0).at("message").at("text"), "'x' became Half here");
  EXPECT_FALSE(result.at("partialFingerprints").at("dtypeLintLineHash/v1").get<std::string>().empty());
}

// What the tool says of its own run (a function cut short) is in every format,
// and absent when there is nothing to say.
TEST_F(Reports, ToolNotesAppearInEveryFormat) {
  const std::vector<Note> notes{
      Note{SourceLocation{file_, 1, 5, 1, 8}, "analysis of 'main' stopped early: calls deeper than 9 levels"}};
  EXPECT_NE(render(ReportFormat::Text, notes)
                .find("train.cpp:1:5: note: analysis of 'main' stopped early: calls deeper than 9 levels [dtype-lint]"),
            std::string::npos);
  const auto json = nlohmann::json::parse(render(ReportFormat::Json, notes));
  EXPECT_EQ(json.at("notifications").at(0).at("message"), notes[0].message);
  EXPECT_EQ(json.at("notifications").at(0).at("line"), 1);
  EXPECT_FALSE(nlohmann::json::parse(render(ReportFormat::Json)).contains("notifications"));
  const auto sarif = nlohmann::json::parse(render(ReportFormat::Sarif, notes));
  const auto& notification = sarif.at("runs").at(0).at("invocations").at(0).at("toolExecutionNotifications").at(0);
  EXPECT_EQ(notification.at("message").at("text"), notes[0].message);
  EXPECT_EQ(notification.at("locations").at(0).at("physicalLocation").at("region").at("startLine"), 1);
  EXPECT_FALSE(nlohmann::json::parse(render(ReportFormat::Sarif)).at("runs").at(0).contains("invocations"));
}

TEST_F(Reports, FingerprintsSurviveUnrelatedLineShifts) {
  SourceText before;
  const auto original = fingerprints({finding_}, before, options_.baseDir);
  std::ofstream(file_) << "// a new comment\n\nint main() {\n  auto y = fc(x);\n}\n";
  finding_.location.line = finding_.location.endLine = 4;
  SourceText after;
  EXPECT_EQ(fingerprints({finding_}, after, options_.baseDir), original);
  std::ofstream(file_) << "int main() {\n  auto y = fc(z);\n}\n";
  finding_.location.line = finding_.location.endLine = 2;
  SourceText changed;
  EXPECT_NE(fingerprints({finding_}, changed, options_.baseDir), original);
}

}  // namespace
}  // namespace dtype_lint
