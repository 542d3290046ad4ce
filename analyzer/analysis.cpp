#include "analysis.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"
#include "dtype_flow.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/suppression.h"
#include "llvm/Support/ThreadPool.h"
#include "tool_flags.h"

namespace dtype_lint::analyzer {

using namespace clang;

namespace {

// Counts compile errors instead of printing LibTorch's diagnostics.
class ErrorCounter : public DiagnosticConsumer {
 public:
  explicit ErrorCounter(TranslationUnitReport& report) : report_(report) {}
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    if (report_.compileErrors++ == 0) {
      llvm::SmallString<128> message;
      info.FormatDiagnostic(message);
      std::string where;
      if (info.hasSourceManager() && info.getLocation().isValid()) {
        PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
        if (p.isValid()) where = std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ": ";
      }
      report_.firstError = where + message.str().str();
    }
  }

 private:
  TranslationUnitReport& report_;
};

int macroInteger(Preprocessor& pp, llvm::StringRef name, int fallback) {
  const MacroInfo* macro = pp.getMacroInfo(pp.getIdentifierInfo(name));
  if (!macro || macro->getNumTokens() != 1 || !macro->tokens_begin()->isLiteral()) return fallback;
  const Token& token = *macro->tokens_begin();
  int value = fallback;
  llvm::StringRef(token.getLiteralData(), token.getLength()).getAsInteger(10, value);
  return value;
}

class DtypeFlowConsumer : public ASTConsumer {
 public:
  DtypeFlowConsumer(CompilerInstance& ci, const ScalerApi& scalerApi, std::vector<Finding>& findings)
      : ci_(ci), scalerApi_(scalerApi), findings_(findings) {}

  void HandleTranslationUnit(ASTContext& context) override {
    Preprocessor& pp = ci_.getPreprocessor();
    const TorchVersion torch{macroInteger(pp, "TORCH_VERSION_MAJOR", 1), macroInteger(pp, "TORCH_VERSION_MINOR", 13)};
    const AnalysisEvents events = analyzeDtypeFlow(context, torch, scalerApi_);
    const DtypeFlowRules rules(torch);
    for (const OpEvent& op : events.ops) rules.onOp(op, findings_);
    for (const OptimizerStepEvent& step : events.steps) rules.onOptimizerStep(step, findings_);
    findings_.insert(findings_.end(), events.protocolFindings.begin(), events.protocolFindings.end());
  }

 private:
  CompilerInstance& ci_;
  const ScalerApi& scalerApi_;
  std::vector<Finding>& findings_;
};

class DtypeFlowAction : public ASTFrontendAction {
 public:
  DtypeFlowAction(const ScalerApi& scalerApi, std::vector<Finding>& findings)
      : scalerApi_(scalerApi), findings_(findings) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& ci, llvm::StringRef) override {
    return std::make_unique<DtypeFlowConsumer>(ci, scalerApi_, findings_);
  }

 private:
  const ScalerApi& scalerApi_;
  std::vector<Finding>& findings_;
};

class ActionFactory : public tooling::FrontendActionFactory {
 public:
  ActionFactory(const ScalerApi& scalerApi, std::vector<Finding>& findings)
      : scalerApi_(scalerApi), findings_(findings) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<DtypeFlowAction>(scalerApi_, findings_);
  }

 private:
  const ScalerApi& scalerApi_;
  std::vector<Finding>& findings_;
};

std::vector<Finding> analyzeOne(const tooling::CompilationDatabase& database, const std::string& file,
                                const Config& config, TranslationUnitReport& report) {
  std::vector<Finding> findings;
  tooling::ClangTool tool(database, {file});
  tool.appendArgumentsAdjuster(analyzerArgumentsAdjuster());
  ErrorCounter counter(report);
  tool.setDiagnosticConsumer(&counter);
  tool.setPrintErrorMessage(false);
  ActionFactory factory(config.scaler, findings);
  tool.run(&factory);
  report.parsed = true;
  return findings;
}

bool ruleSelected(const RuleInfo& rule, const std::vector<std::string>& globs) {
  if (globs.empty()) return true;
  bool selected = false;
  for (const std::string& g : globs) {
    const bool negative = !g.empty() && g.front() == '-';
    const std::string_view pattern = negative ? std::string_view(g).substr(1) : std::string_view(g);
    if (globMatch(pattern, rule.id) || globMatch(pattern, qualifiedName(rule))) selected = !negative;
  }
  return selected;
}

}  // namespace

AnalysisResult analyze(const tooling::CompilationDatabase& database, const std::vector<std::string>& files,
                       const AnalysisOptions& options) {
  AnalysisResult result;
  result.units.resize(files.size());
  std::vector<std::vector<Finding>> perFile(files.size());
  {
    llvm::ThreadPool pool(llvm::hardware_concurrency(std::max(1u, options.jobs)));
    for (size_t i = 0; i < files.size(); ++i) {
      result.units[i].file = files[i];
      pool.async([&, i] {
        auto config = options.configs.find(files[i]);
        perFile[i] = analyzeOne(database, files[i], config != options.configs.end() ? config->second : Config{},
                                result.units[i]);
      });
    }
    pool.wait();
  }

  SourceText source;
  std::set<std::tuple<std::string, unsigned, unsigned, std::string_view>> seen;
  for (auto& findings : perFile)
    for (Finding& f : findings) {
      if (!ruleSelected(*f.rule, options.ruleGlobs) || isSuppressed(f, source)) continue;
      if (auto config = options.configs.find(files[&findings - perFile.data()]);
          config != options.configs.end() && !ruleSelected(*f.rule, config->second.rules))
        continue;
      // A header included by several translation units, or a helper analyzed
      // in several calling contexts, reports once.
      if (!seen.emplace(f.location.file, f.location.line, f.location.column, f.rule->id).second) continue;
      result.findings.push_back(std::move(f));
    }
  std::stable_sort(result.findings.begin(), result.findings.end(), locationOrder);
  return result;
}

}  // namespace dtype_lint::analyzer
