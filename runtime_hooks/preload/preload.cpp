// libdtype_lint_preload.so: loaded with LD_PRELOAD (by `dtype-lint run` or by
// hand). It never links LibTorch: it runs the rule engines on events, writes
// findings as they are made, and loads the adapter that binds to the
// process's own LibTorch when there is one.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "adapter_loader.h"
#include "dtype_lint/annotate.h"
#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "dtype_lint/dl305_precision_profile.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/numeric_health.h"
#include "dtype_lint/scaler_protocol.h"
#include "dtype_lint_runtime/boundary.h"
#include "dtype_lint_runtime/hook_scope.h"
#include "fork_gate.h"
#include "gemm_accounting.h"
#include "op_record.h"
#include "python_frames.h"
#include "report_stream.h"
#include "tensor_values.h"
#include "user_frame.h"

namespace dtype_lint::runtime {
namespace {

struct Core {
  ReportStream report;
  std::mutex mutex;
  std::shared_ptr<const DtypeFlowRules> rules;  // taken under the lock, used outside it
  ScalerProtocol protocol;  // fed by dtype_lint/annotate.h, keyed by object addresses
  std::optional<ScalerProtocol> beforePythonUnscale;  // restored when that unscale_() raised
  bool afterScalingMistake = false;  // since the last backward: the gradients' size is that mistake's
  bool clippedSinceBackward = false;  // a clip Python announced, or one by hand: a clip call's own ops are not another
  bool scalerAnnounced = false;
  std::map<const void*, ObjectRef> scaledLosses;  // loss TensorImpl -> the scaler that scaled it
  ManualScalingTrace manualScaling;
  std::atomic<bool> manualFactorSeen{
      false};  // a backward() of a loss multiplied by a constant: DL203 follows in-place products
  AmpBackwardTrace ampBackwards;  // DL207 for scalers on the raw AMP ops
  NumericHealthRules numericHealth;  // DL301-DL303 on counted values
  PrecisionProfile profile;  // DL305: the dispatcher's GEMMs and cuBLAS calls outside it
  std::atomic<bool> halfAutocastSeen{false};  // an op ran under Half autocast: backwards run partly in Half
  std::set<std::string> uncountedDevices;  // tensors the numeric-health checks could not read
  std::map<uint64_t, CapturedSite> sites;  // the latest captured sites (DL104's casts), by id
  uint64_t nextSite = 1;
};

Core& core() {
  static Core* instance = new Core();  // outlives every static destructor: ops run until exit
  return *instance;
}

// The FLOPs of GEMMs whose sites do not matter (most of a run's), per thread
// and kind: the owning thread adds to its slots with no lock (one writer per
// slot); finish() sums every thread's into the profile.
class GemmTally {
 public:
  std::atomic<double>& slot(const GemmKind& kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    return kinds_.emplace_back(kind, 0.0).second;
  }
  void addTo(PrecisionProfile& profile) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [kind, flops] : kinds_) profile.add(kind, flops.exchange(0, std::memory_order_relaxed), std::nullopt);
  }

 private:
  std::mutex mutex_;  // kinds_ grows while finish() may read it
  std::deque<std::pair<GemmKind, std::atomic<double>>> kinds_;
};

std::mutex talliesMutex;
std::vector<std::shared_ptr<GemmTally>>& tallies() {
  static auto* all = new std::vector<std::shared_ptr<GemmTally>>();  // outlive their threads
  return *all;
}

GemmTally& threadTally() {
  thread_local std::shared_ptr<GemmTally> mine = [] {
    auto tally = std::make_shared<GemmTally>();
    std::lock_guard<std::mutex> lock(talliesMutex);
    tallies().push_back(tally);
    return tally;
  }();
  return *mine;
}

__attribute__((constructor)) void start() {
  installForkGate();
  core().report.open();
  std::string optionError;
  core().numericHealth = NumericHealthRules(numericHealthOptionsFrom(std::getenv, optionError));
  const char* profile = std::getenv("DTYPE_LINT_PROFILE");
  core().profile = PrecisionProfile(profile && std::string_view(profile) == "1");
  if (!optionError.empty()) std::fprintf(stderr, "dtype-lint: warning: %s\n", optionError.c_str());
  // A Python interpreter loads LibTorch later, with `import torch`.
  if (!attachAdapterIfLibTorchLoaded()) pythonStartsWithHooks();
}

// A manual scaling still pending when the program ends normally is decided now.
__attribute__((destructor)) void finish() {
  const HookScope scope;
  if (!scope) return;
  auto& c = core();
  std::vector<Finding> findings;
  std::set<std::string> uncountedDevices;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.manualScaling.finish(findings);
    {
      std::lock_guard<std::mutex> talliesLock(talliesMutex);
      for (const auto& tally : tallies()) tally->addTo(c.profile);
    }
    if (auto profile = c.profile.finish()) findings.push_back(std::move(*profile));
    uncountedDevices = c.uncountedDevices;
  }
  for (const Finding& f : findings) c.report.write(f);
  notePythonRanWithoutHooks();
  for (const std::string& device : uncountedDevices) std::fprintf(stderr, "%s\n", uncountedDeviceNote(device).c_str());
}

// A GEMM a dispatcher op is running on this thread: cuBLAS calls under it are its own.
thread_local bool gemmOpRunning = false;

}  // namespace

bool dispatcherGemmRunning() { return gemmOpRunning; }

void addGemm(const GemmKind& kind, double flops, bool hasUserSite) {
  const HookScope scope;  // cuBLAS calls come straight from the program
  if (!scope) return;
  auto& c = core();
  bool wantsSite = false;
  if (hasUserSite) {
    std::lock_guard<std::mutex> lock(c.mutex);
    wantsSite = c.profile.wantsSite(kind);
  }
  const auto site = wantsSite ? firstUserFrame() : std::nullopt;  // sampled: the stack walk is the cost
  std::lock_guard<std::mutex> lock(c.mutex);
  c.profile.add(kind, flops, site);
}

namespace {

// A dispatcher GEMM's kind (rules/: the dtype it ran in) is made once per
// thread for each combination of dtypes (a step's GEMMs repeat a few), with
// the tally slot it adds to when its site does not matter.
void countDispatcherGemm(const dtype_lint_op_record& record) {
  gemmOpRunning = true;
  std::optional<ScalarType> operands[2];
  size_t operandCount = 0;
  DispatcherGemm gemm;
  for (uint32_t i = 0; i < std::min(record.input_count, DTYPE_LINT_MAX_OPERANDS); ++i) {
    const auto dtype = scalarTypeOf(record.inputs[i].dtype);
    if (!dtype) continue;
    gemm.anyDouble = gemm.anyDouble || *dtype == ScalarType::Double;
    if (operandCount < 2) operands[operandCount++] = *dtype;
  }
  if (operandCount == 0) return;
  gemm.first = *operands[0];
  gemm.second = operands[1];
  const dtype_lint_autocast& autocast = record.autocast_cuda.enabled ? record.autocast_cuda : record.autocast_cpu;
  if (autocast.enabled) gemm.autocastDtype = scalarTypeOf(autocast.dtype);
  gemm.autocastOn = autocast.enabled || record.autocast_elsewhere;
  const auto code = [](const std::optional<ScalarType>& t) { return t ? int(*t) + 1 : 0; };
  const int key = ((code(gemm.first) * 16 + code(gemm.second)) * 16 + code(gemm.autocastDtype)) * 4 +
                  int(gemm.anyDouble) * 2 + int(gemm.autocastOn);
  struct KnownKind {
    GemmKind kind;
    std::atomic<double>* tally = nullptr;  // none where its sites matter
  };
  thread_local std::unordered_map<int, KnownKind> kinds;
  auto [it, added] = kinds.try_emplace(key);
  KnownKind& known = it->second;
  if (added) {
    known.kind = kindOf(gemm);
    if (!core().profile.sitesMatter(known.kind)) known.tally = &threadTally().slot(known.kind);
  }
  if (known.tally)
    known.tally->store(known.tally->load(std::memory_order_relaxed) + record.flops, std::memory_order_relaxed);
  else addGemm(known.kind, record.flops, /*hasUserSite=*/!record.in_custom_backward);
}

// A 64-bit fingerprint of what the flow rules judge in an op record, eight
// bytes at a time (it is taken for every op some rule watches).
uint64_t fingerprint(const dtype_lint_op_record& record) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto word = [&h](uint64_t w) {
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  };
  auto text = [&](const dtype_lint_text& t) {
    const uint32_t length = std::min<uint32_t>(t.length, DTYPE_LINT_TEXT_CAPACITY);
    word(length);
    for (uint32_t i = 0; i < length; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, t.bytes + i, std::min<uint32_t>(8, length - i));
      word(w);
    }
  };
  auto operand = [&](const dtype_lint_operand& o) {
    text(o.description);
    word(static_cast<uint32_t>(o.dtype));
  };
  text(record.op);
  const uint32_t inputs = std::min(record.input_count, DTYPE_LINT_MAX_OPERANDS);
  word(inputs);
  for (uint32_t i = 0; i < inputs; ++i) operand(record.inputs[i]);
  if (record.has_destination) operand(record.destination);
  word(uint64_t{record.has_destination} | uint64_t{record.explicit_dtype} << 8 |
       uint64_t{record.reduces_all_dims} << 16 | uint64_t{record.in_custom_backward} << 24 |
       uint64_t{record.autocast_cpu.enabled} << 32 | uint64_t{record.autocast_cuda.enabled} << 40 |
       uint64_t{record.autocast_elsewhere} << 48);
  word(static_cast<uint32_t>(record.autocast_cpu.dtype) | uint64_t{static_cast<uint32_t>(record.autocast_cuda.dtype)}
                                                              << 32);
  return h;
}

// The op records that made no finding. DtypeFlowRules::onOp judges an op from
// its record alone, so the same record never makes one later: a training
// loop's ops are judged once, not every step. Per thread, one slot per
// fingerprint's low bits.
class CleanRecords {
 public:
  bool contains(uint64_t fingerprint) const { return slots_[fingerprint % slots_.size()] == fingerprint; }
  void add(uint64_t fingerprint) { slots_[fingerprint % slots_.size()] = fingerprint; }

 private:
  std::array<uint64_t, 4096> slots_{};
};
thread_local CleanRecords cleanRecords;

// DL101 in a Python process names the module parameters among the operands
// ("'score.weight'") with a note where their dtype came from: the findings
// are made again from the named operands. Python and the rules are called
// without the core's lock held.
void renameModuleParameters(const DtypeFlowRules& rules, const dtype_lint_op_record& record, const OpEvent& event,
                            std::vector<Finding>& findings) {
  OpEvent named = event;
  bool any = false;
  for (size_t i = 0; i < named.inputs.size(); ++i)
    if (auto name = namePythonTensor(record.inputs[i].tensor)) {
      named.inputs[i].description = std::move(name->description);
      named.inputs[i].origin = std::move(name->origin);
      any = true;
    }
  if (!any) return;
  std::vector<Finding> renamed;
  rules.onOp(named, renamed);
  if (renamed.size() == findings.size()) findings = std::move(renamed);
}

// Findings of a check point, at the user's line (walked only when there are
// some): the captured `site`'s, else the calling thread's now.
void writeAtUserFrame(std::vector<Finding>& findings, uint64_t site) {
  if (findings.empty()) return;
  std::optional<CapturedSite> captured;
  if (site != 0) {
    std::lock_guard<std::mutex> lock(core().mutex);
    if (auto it = core().sites.find(site); it != core().sites.end()) captured = it->second;
  }
  const auto at = captured ? firstUserFrameOf(*captured) : firstUserFrame();
  if (!at) return;
  for (Finding& f : findings) {
    f.location = *at;
    core().report.write(f);
  }
}

}  // namespace
}  // namespace dtype_lint::runtime

using namespace dtype_lint;

extern "C" __attribute__((visibility("default"))) int
dtype_lint_runtime_attach(uint32_t boundaryVersion, int32_t torchMajor, int32_t torchMinor) {
  const runtime::HookScope scope;
  if (!scope) return 0;
  if (boundaryVersion != DTYPE_LINT_BOUNDARY_VERSION) {
    std::fprintf(stderr,
                 "dtype-lint: error: the adapter speaks boundary version %u, this preload library %u: rebuild the "
                 "adapter; the runtime hooks are off for this process\n",
                 boundaryVersion, DTYPE_LINT_BOUNDARY_VERSION);
    return 0;
  }
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.rules = std::make_shared<const DtypeFlowRules>(TorchVersion{torchMajor, torchMinor});
  c.report.attached(torchMajor, torchMinor);
  return 1;
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_op(const dtype_lint_op_record* record) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  if (record->flops > 0) runtime::countDispatcherGemm(*record);
  for (const dtype_lint_autocast& a : {record->autocast_cpu, record->autocast_cuda})
    if (a.enabled && a.dtype == DTYPE_LINT_DTYPE_HALF) c.halfAutocastSeen = true;
  const uint64_t fingerprint = runtime::fingerprint(*record);
  if (runtime::cleanRecords.contains(fingerprint)) return;
  std::shared_ptr<const DtypeFlowRules> rules;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    rules = c.rules;
  }
  if (!rules) return;
  OpEvent event = runtime::opEventOf(*record);
  // A verdict that asked the stack holds for this call only, not for the record.
  bool askedTheStack = false;
  event.issuedByLibraryModule = [&askedTheStack] {
    askedTheStack = true;
    return runtime::issuedByLibTorchFrontend();
  };
  std::vector<Finding> findings;
  rules->onOp(event, findings);
  if (findings.empty() && !askedTheStack) runtime::cleanRecords.add(fingerprint);
  if (findings.empty()) return;
  // Only now pay for the stack: the op has not run yet, so the user's frame is live.
  const auto at = runtime::firstUserFrame();
  if (!at) return;
  if (std::any_of(findings.begin(), findings.end(), namesItsOperands))
    runtime::renameModuleParameters(*rules, *record, event, findings);
  for (Finding& f : findings) {
    f.location = *at;
    // Notes with a place: where a named parameter's dtype came from (the rules' others have none at runtime).
    std::erase_if(f.notes, [](const Note& n) { return !n.location.valid(); });
    c.report.write(f);
  }
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_annotate_scaler(int event, const void* scaler,
                                                                                  const void* optimizer) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  const ObjectRef scalerRef{reinterpret_cast<uintptr_t>(scaler), "scaler"};
  const ObjectRef optimizerRef{reinterpret_cast<uintptr_t>(optimizer), "optimizer"};
  // Reported at the user's call of the scaler method that announced itself.
  // Without one (no debug info) the protocol still moves on: a skipped
  // update would make the next unscale look like a second one.
  const auto at = runtime::firstUserFrame(/*skipUserFrames=*/1);
  const SourceLocation where = at.value_or(SourceLocation{});
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.scalerAnnounced = true;
    switch (event) {
    case annotate::kUnscale: c.protocol.unscale(scalerRef, optimizerRef, where, findings); break;
    case annotate::kStep: c.protocol.step(scalerRef, optimizerRef, where, findings); break;
    case annotate::kUpdate: c.protocol.update(scalerRef, where, findings); break;
    default: return;
    }
  }
  for (const Finding& f : findings) c.report.write(f);
}

namespace {
// The raw AMP ops carry no scaler object: one scale per process, the usual shape of a C++ port.
const dtype_lint::ObjectRef kAmpOpsScaler{1, "scaler"};

// A scaler that announces itself is followed by its announcements; the raw
// ops it is built on would tell the same story again at its own lines.
bool followRawAmpOps(runtime::Core& c) {
  std::lock_guard<std::mutex> lock(c.mutex);
  return !c.scalerAnnounced;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_amp_unscale(const void* firstGradient,
                                                                                      int32_t gradientDtype) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  if (!followRawAmpOps(c)) return;
  const ObjectRef optimizer{reinterpret_cast<uintptr_t>(firstGradient), "optimizer"};
  // Reported at the user's call of the op.
  const auto at = runtime::firstUserFrame();
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.protocol.optimizer(optimizer.id))
      if (const auto parameters = runtime::scalarTypeOf(gradientDtype))
        if (const auto dtype = parameterDtypeFromUnscaledGradients(*parameters))
          c.protocol.declareOptimizer(optimizer, *dtype, std::nullopt, 0);
    c.protocol.unscale(kAmpOpsScaler, optimizer, at.value_or(SourceLocation{}), findings);
  }
  for (const Finding& f : findings) c.report.write(f);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_amp_update() {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  if (!followRawAmpOps(c)) return;
  const auto at = runtime::firstUserFrame();
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.protocol.updateFromInfChecks(kAmpOpsScaler, at.value_or(SourceLocation{}), findings);
    c.ampBackwards.update();
  }
  for (const Finding& f : findings) c.report.write(f);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_amp_step(const void* firstGradient) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  if (!followRawAmpOps(c)) return;
  const ObjectRef optimizer{reinterpret_cast<uintptr_t>(firstGradient), "optimizer"};
  // At the user's call of the optimizer's step().
  const SourceLocation at = runtime::firstUserFrame().value_or(SourceLocation{});
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.protocol.stepSeenByParameterUpdate(kAmpOpsScaler, optimizer, at);
    c.ampBackwards.step(optimizer, at, findings);
  }
  for (const Finding& f : findings) c.report.write(f);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_amp_backward(int32_t loss) {
  const runtime::HookScope scope;
  if (!scope) return;
  const auto kind = runtime::ampLossOf(loss);
  auto& c = runtime::core();
  if (!followRawAmpOps(c)) return;
  // Only an unscaled loss's backward may be named in a finding (DL207's note).
  const SourceLocation at = kind == AmpBackwardTrace::Loss::Unscaled
                                ? runtime::firstUserFrame().value_or(SourceLocation{})
                                : SourceLocation{};
  std::lock_guard<std::mutex> lock(c.mutex);
  c.ampBackwards.backward(kind, at);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_backward(const void* loss,
                                                                                   double lossFactor) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  std::optional<ObjectRef> scaledBy;
  bool followProtocol = false;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.scaledLosses.find(loss); it != c.scaledLosses.end()) {
      scaledBy = it->second;
      c.scaledLosses.erase(it);
    }
    followProtocol = c.scalerAnnounced;
  }
  const bool manualFactor = lossFactor != 0 && !scaledBy;
  if (manualFactor) c.manualFactorSeen = true;
  // The stack is walked only where a rule may need this backward's line.
  if (!followProtocol && !manualFactor) return;
  const auto at = runtime::firstUserFrame();
  const SourceLocation where = at.value_or(SourceLocation{});
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (followProtocol) {
      if (scaledBy) c.protocol.scaledBackward(*scaledBy, where);
      else c.protocol.unscaledBackward(where);
    }
    c.afterScalingMistake = false;
    c.clippedSinceBackward = false;
    c.manualScaling.backward(manualFactor ? std::optional<double>(lossFactor) : std::nullopt, where, findings);
  }
  for (const Finding& f : findings) c.report.write(f);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_multiplied_in_place(double multiplier) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  if (!c.manualFactorSeen) return;  // every in-place product by a number comes here: most programs never scale by hand
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.manualScaling.undoesPendingFactor(multiplier)) return;
  }
  const auto at = runtime::firstUserFrame();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.manualScaling.gradientsDividedBack(at.value_or(SourceLocation{}));
}

// Reported where the clip's size was decided on scaled gradients (the norm,
// the clamp), with a note at the product that applied it.
extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_gradients_clipped(uint64_t decidedAt) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  std::optional<runtime::CapturedSite> decided;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.clippedSinceBackward) return;
    c.clippedSinceBackward = true;
    if (auto it = c.sites.find(decidedAt); it != c.sites.end()) decided = it->second;
  }
  const auto appliedAt = runtime::firstUserFrame();
  const auto at = decided ? runtime::firstUserFrameOf(*decided) : appliedAt;
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.protocol.clip(nullptr, 0, at.value_or(SourceLocation{}), findings);
    c.afterScalingMistake =
        c.afterScalingMistake || std::any_of(findings.begin(), findings.end(), leavesGradientsMisscaled);
  }
  for (Finding& f : findings) {
    if (at && appliedAt && (appliedAt->file != at->file || appliedAt->line != at->line))
      f.notes.push_back({*appliedAt, "the gradients rescaled by it here"});
    c.report.write(f);
  }
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_nonfinite_check() {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.manualScaling.nonFiniteCheck();
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_annotate_parameters(const void* optimizer,
                                                                                      const char* dtype) {
  const runtime::HookScope scope;
  if (!scope) return;
  const auto parameterDtype = scalarTypeFromName(dtype ? dtype : "");
  if (!parameterDtype) return;
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto id = reinterpret_cast<uintptr_t>(optimizer);
  if (!c.protocol.optimizer(id))
    c.protocol.declareOptimizer(ObjectRef{id, "optimizer"}, DtypeSet(*parameterDtype), std::nullopt, 0);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_annotate_scaled_loss(const void* scaler,
                                                                                       const void* loss) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.scalerAnnounced = true;
  // Losses scaled and never backwarded (evaluation) must not pile up.
  if (c.scaledLosses.size() >= 64) c.scaledLosses.clear();
  c.scaledLosses[loss] = ObjectRef{reinterpret_cast<uintptr_t>(scaler), "scaler"};
}

extern "C" __attribute__((visibility("default"))) uint64_t dtype_lint_runtime_capture_site() {
  const runtime::HookScope scope;
  if (!scope) return 0;
  runtime::CapturedSite site = runtime::captureSite();
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  constexpr size_t kKeptSites = 256;  // a cast is consumed soon after it is made
  if (c.sites.size() >= kKeptSites) c.sites.erase(c.sites.begin());
  const uint64_t id = c.nextSite++;
  c.sites.emplace(id, std::move(site));
  return id;
}

extern "C" __attribute__((visibility("default"))) void
dtype_lint_runtime_cast_consumed(const dtype_lint_op_record* record, uint32_t input, int32_t castFrom, int32_t castTo,
                                 uint64_t castSite) {
  const runtime::HookScope scope;
  if (!scope) return;
  const auto from = runtime::scalarTypeOf(castFrom), to = runtime::scalarTypeOf(castTo);
  OpEvent event = runtime::opEventOf(*record);
  if (!to || input >= event.inputs.size()) return;
  auto& c = runtime::core();
  runtime::CapturedSite site;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.sites.find(castSite);
    if (!c.rules || it == c.sites.end()) return;
    site = it->second;
  }
  if (site.inLibraryCode) return;  // a library's own cast (peft's x.to(lora_A.weight.dtype)): not the user's to remove
  const auto castAt = runtime::firstUserFrameOf(site);
  if (!castAt) return;
  event.inputs[input].castInAutocast = ExplicitCast{from ? DtypeSet(*from) : DtypeSet::unknown(), *to, *castAt};
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.rules->checkCastInsideAutocast(event, findings);
  }
  if (findings.empty()) return;
  const auto opAt = runtime::firstUserFrame();
  for (Finding& f : findings) {
    f.notes.clear();
    if (opAt) f.notes.push_back({*opAt, fmt::format("autocast casts the operands of {} here", event.op)});
    c.report.write(f);
  }
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_uncounted(const dtype_lint_text* device) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.uncountedDevices.insert(runtime::textOf(*device));
}

extern "C" __attribute__((visibility("default"))) int dtype_lint_runtime_wants_values(int32_t check) {
  const runtime::HookScope scope;
  if (!scope) return 0;
  auto& c = runtime::core();
  std::lock_guard<std::mutex> lock(c.mutex);
  return check == DTYPE_LINT_CHECK_HALF_CAST ? c.numericHealth.sampleCast() : c.numericHealth.sampleGradients();
}

extern "C" __attribute__((visibility("default"))) void
dtype_lint_runtime_gradients(int32_t point, const dtype_lint_tensor_values* gradients, uint32_t count, double lossScale,
                             uint64_t site) {
  const runtime::HookScope scope;
  if (!scope) return;
  GradientCheck check;
  check.point = point == DTYPE_LINT_POINT_UNSCALE ? GradientPoint::Unscale : GradientPoint::Step;
  if (lossScale > 0) check.lossScale = lossScale;
  for (uint32_t i = 0; i < count; ++i) {
    check.gradients.push_back(
        {"a " + runtime::dtypeAndShape(gradients[i]) + " parameter", runtime::countValues(gradients[i])});
    check.computedInHalf = check.computedInHalf || gradients[i].dtype == DTYPE_LINT_DTYPE_HALF;
  }
  auto& c = runtime::core();
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    // Scaled gradients of a backward that ran partly in Half.
    if (check.point == GradientPoint::Unscale && c.halfAutocastSeen) check.computedInHalf = true;
    check.afterScalingMistake = c.afterScalingMistake;
    c.numericHealth.onGradients(check, SourceLocation{}, findings);
  }
  runtime::writeAtUserFrame(findings, site);
}

extern "C" __attribute__((visibility("default"))) void
dtype_lint_runtime_half_cast(const dtype_lint_text* op, const dtype_lint_text* source, uint8_t byAutocast,
                             const dtype_lint_tensor_values* values, uint64_t site) {
  const runtime::HookScope scope;
  if (!scope) return;
  const auto sourceDtype = runtime::scalarTypeOf(values->dtype);
  if (!sourceDtype) return;
  const ValueCounts counts = runtime::countValues(*values);
  auto& c = runtime::core();
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.numericHealth.onHalfCast(runtime::textOf(*op), runtime::textOf(*source), *sourceDtype, byAutocast != 0, counts,
                               SourceLocation{}, findings);
  }
  runtime::writeAtUserFrame(findings, site);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_gemm_done() {
  const runtime::HookScope scope;
  if (!scope) return;
  runtime::gemmOpRunning = false;
}

namespace {
// A line of a Python file, as the hooks report one (no line: unknown).
SourceLocation pythonLocation(const char* file, int line) {
  return file && line > 0 ? SourceLocation{file, unsigned(line), 0, unsigned(line), 0} : SourceLocation{};
}
}  // namespace

// What Python's hooks (runtime_hooks/python/dtype_lint_torch.py) report:
// the calls of torch.amp.GradScaler, optimizers and clipping, at the user's
// line, which Python knows.
static_assert(int{DTYPE_LINT_PYTHON_UNSCALE} == int{annotate::kUnscale} &&
              int{DTYPE_LINT_PYTHON_STEP} == int{annotate::kStep} &&
              int{DTYPE_LINT_PYTHON_UPDATE} == int{annotate::kUpdate});

extern "C" __attribute__((visibility("default"))) const char* dtype_lint_python_event_codes() {
#define DTYPE_LINT_PYTHON_EVENT_TEXT(NAME, CODE) #NAME "=" #CODE " "
  return DTYPE_LINT_PYTHON_EVENTS(DTYPE_LINT_PYTHON_EVENT_TEXT);
#undef DTYPE_LINT_PYTHON_EVENT_TEXT
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_python_event(int event, uintptr_t scaler,
                                                                               uintptr_t optimizer, const char* file,
                                                                               int line, const char* detail) {
  const runtime::HookScope scope;
  if (!scope) return;
  auto& c = runtime::core();
  const ObjectRef scalerRef{scaler, "scaler"};
  const ObjectRef optimizerRef{optimizer, "optimizer"};
  const SourceLocation at = pythonLocation(file, line);
  std::vector<Finding> findings;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    switch (event) {
    case DTYPE_LINT_PYTHON_UNSCALE:
      c.scalerAnnounced = true;
      c.beforePythonUnscale = c.protocol;
      c.protocol.unscale(scalerRef, optimizerRef, at, findings);
      break;
    case DTYPE_LINT_PYTHON_STEP_WITHOUT_GRADIENTS:
      c.protocol.stepWithoutGradients(scalerRef, optimizerRef, at, findings);
      break;
    case DTYPE_LINT_PYTHON_UNSCALE_RAISED:
      if (c.beforePythonUnscale) c.protocol = std::move(*c.beforePythonUnscale);
      c.beforePythonUnscale.reset();
      break;
    case DTYPE_LINT_PYTHON_STEP:
      c.scalerAnnounced = true;
      c.protocol.step(scalerRef, optimizerRef, at, findings);
      c.protocol.optimizerSteppedByScaler(optimizerRef, at);
      c.afterScalingMistake =
          c.afterScalingMistake || std::any_of(findings.begin(), findings.end(), leavesGradientsMisscaled);
      break;
    case DTYPE_LINT_PYTHON_UPDATE:
      c.scalerAnnounced = true;
      c.protocol.update(scalerRef, at, findings);
      break;
    case DTYPE_LINT_PYTHON_OPTIMIZER_CREATED:
      if (!c.protocol.optimizer(optimizer))
        c.protocol.declareOptimizer(optimizerRef, DtypeSet::unknown(), std::nullopt, 0);
      break;
    case DTYPE_LINT_PYTHON_SCALER_CREATED:
      c.scalerAnnounced = true;  // from now on every backward is a scaled or an unscaled one
      c.protocol.declareScaler(scalerRef);
      break;
    case DTYPE_LINT_PYTHON_OPTIMIZER_STEP: c.protocol.optimizerStep(optimizerRef, at, findings); break;
    case DTYPE_LINT_PYTHON_CLIP:
      c.clippedSinceBackward = true;
      c.protocol.clip(optimizer ? &optimizerRef : nullptr, 0, at, findings);
      c.afterScalingMistake =
          c.afterScalingMistake || std::any_of(findings.begin(), findings.end(), leavesGradientsMisscaled);
      break;
    case DTYPE_LINT_PYTHON_ZERO_GRAD: c.protocol.zeroGrad(optimizerRef); break;
    case DTYPE_LINT_PYTHON_PARAMETERS_HALF:
      c.protocol.parametersBecame(optimizerRef, DtypeSet(ScalarType::Half),
                                  Note{at, detail ? detail : "the parameters became Half here"});
      break;
    default: return;
    }
  }
  for (const Finding& f : findings) c.report.write(f);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_python_optimizer_epsilon(double eps,
                                                                                           const char* parameterDtype,
                                                                                           const char* optimizerClass,
                                                                                           const char* file, int line) {
  const runtime::HookScope scope;
  if (!scope) return;
  const auto parameters = parameterDtype ? scalarTypeFromName(parameterDtype) : std::nullopt;
  if (!parameters || !optimizerClass) return;
  std::vector<Finding> findings;
  checkOptimizerEpsilon(fmt::format("'{}'", optimizerClass), eps, DtypeSet(*parameters), std::nullopt,
                        pythonLocation(file, line), findings);
  for (const Finding& f : findings) runtime::core().report.write(f);
}

// Python's GradScaler.scale() given a loss the user's code multiplied by a
// constant (scaler.scale(loss * 1024)): scaled twice, DL203.
extern "C" __attribute__((visibility("default"))) void
dtype_lint_python_scaled_loss_factor(double factor, const char* file, int line) {
  const runtime::HookScope scope;
  if (!scope) return;
  const SourceLocation at = pythonLocation(file, line);
  std::vector<Finding> findings;
  checkScalingInsideScaler(manualScalingOf(at, factor, std::nullopt, ""), at, findings);
  auto& c = runtime::core();
  for (const Finding& f : findings) c.report.write(f);
}

// Python imports torch after start: the hooks' sitecustomize (set up by
// pythonStartsWithHooks) calls this once `import torch` has loaded LibTorch.
// 1 when the adapter for that LibTorch is in.
extern "C" __attribute__((visibility("default"))) int dtype_lint_python_torch_loaded() {
  const runtime::HookScope scope;
  if (!scope) return 0;
  return runtime::attachAdapterIfLibTorchLoaded() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) int dtype_lint_runtime_enter() { return runtime::enterHooks(); }

extern "C" __attribute__((visibility("default"))) void dtype_lint_runtime_leave() { runtime::leaveHooks(); }
