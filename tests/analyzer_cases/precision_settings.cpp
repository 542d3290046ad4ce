// Precision chosen by name at run time (a command-line value, an environment
// variable, a config field) and resolved through a map, an if-chain, a
// ternary or an enum: the analysis runs once per value the program names, and
// a finding says which value it needs. Each trainer is a root of its own.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "common/grad_scaler.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>

const std::map<std::string, torch::Dtype> kDtypes = {
    {"fp32", torch::kFloat}, {"fp16", torch::kHalf}, {"bf16", torch::kBFloat16}};

struct TrainConfig {
  std::string precision = "fp32";
  int64_t width = 8;
};

TrainConfig parseArgs(int argc, char** argv) {
  TrainConfig cfg;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--precision") cfg.precision = argv[i + 1];
  return cfg;
}

// A map from names to dtypes converts the encoder; the head stays Float.
void trainWithMap(const TrainConfig& cfg) {
  torch::nn::Linear encoder(cfg.width, cfg.width), head(cfg.width, 2);
  const torch::Dtype dtype = kDtypes.at(cfg.precision);
  encoder->to(dtype);
  auto features = encoder(torch::randn({4, cfg.width}).to(dtype));
  auto logits = head(features);  // dtype-lint-expect: DL101:17 {{'linear' on operands of different dtypes outside autocast (input 'features': Half, the parameters of 'head': Float)}}
  logits.sum().backward();
}

// The same with the head converted too: every value is consistent.
void trainWithMapConsistently(const TrainConfig& cfg) {
  torch::nn::Linear encoder(cfg.width, cfg.width), head(cfg.width, 2);
  const torch::Dtype dtype = kDtypes.at(cfg.precision);
  encoder->to(dtype);
  head->to(dtype);
  auto features = encoder(torch::randn({4, cfg.width}).to(dtype));
  head(features).to(torch::kFloat).sum().backward();
}

// An if-chain in a helper, from the environment.
torch::Dtype dtypeNamed(const std::string& name) {
  if (name == "half") return torch::kHalf;
  if (name == "bfloat16") return torch::kBFloat16;
  return torch::kFloat;
}

void trainFromEnvironment() {
  const char* env = std::getenv("TRAIN_DTYPE");
  const std::string name = env ? env : "float";
  torch::nn::Linear body(8, 8), value_head(8, 1);
  const auto dtype = dtypeNamed(name);
  body->to(dtype);
  auto hidden = body(torch::randn({2, 8}, torch::TensorOptions().dtype(dtype)));
  auto value = value_head(hidden);  // dtype-lint-expect: DL101
  value.sum().backward();
}

// A lookup that checks for unknown names first.
torch::Dtype checkedDtype(const std::string& name) {
  static const std::map<std::string, torch::Dtype> names = {{"fp32", torch::kFloat}, {"bf16", torch::kBFloat16}};
  auto it = names.find(name);
  TORCH_CHECK(it != names.end(), "unsupported dtype ", name);
  return it->second;
}

void trainWithCheckedLookup(const TrainConfig& cfg) {
  torch::nn::Linear adapter(8, 8), base(8, 8);
  adapter->to(checkedDtype(cfg.precision));
  auto low = adapter(torch::randn({2, 8}).to(checkedDtype(cfg.precision)));
  base(low).sum().backward();  // dtype-lint-expect: DL101
}

// Only the value the program compares with is Half; a bool holds the test.
void trainWithBool(const TrainConfig& cfg) {
  const bool half = cfg.precision == "fp16";
  torch::nn::Linear net(cfg.width, 1);
  auto x = torch::randn({4, cfg.width});
  if (half) x = x.to(torch::kHalf);
  auto y = net(x);  // dtype-lint-expect: DL101
  y.sum().backward();
}

// Converted on the same test: no value mixes dtypes.
void trainWithBoolConsistently(const TrainConfig& cfg) {
  const bool half = cfg.precision == "fp16";
  torch::nn::Linear net(cfg.width, 1);
  auto x = torch::randn({4, cfg.width});
  if (half) {
    x = x.to(torch::kHalf);
    net->to(torch::kHalf);
  }
  net(x).to(torch::kFloat).sum().backward();
}

enum class Precision { kFloat32, kBFloat16 };

struct EnumConfig {
  Precision precision = Precision::kFloat32;
};

EnumConfig enumConfig(const char* arg) {
  EnumConfig cfg;
  if (arg && std::strcmp(arg, "bf16") == 0) cfg.precision = Precision::kBFloat16;
  return cfg;
}

// An enum compared in a ternary.
void trainWithEnum(const EnumConfig& cfg) {
  torch::nn::Linear proj(8, 8), out(8, 4);
  const auto dtype = cfg.precision == Precision::kBFloat16 ? torch::kBFloat16 : torch::kFloat;
  proj->to(dtype);
  auto h = proj(torch::randn({3, 8}).to(dtype));
  auto scores = out(h);  // dtype-lint-expect: DL101
  scores.sum().backward();
}

// The dtype kept in a member its constructor looks up; the methods use it.
class GroupTrainer {
 public:
  explicit GroupTrainer(const TrainConfig& cfg) : dtype_(kDtypes.at(cfg.precision)) {
    encoder_->to(dtype_);
    scorer_->to(dtype_);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = encoder_(x.to(dtype_));
    return head_(scorer_(h));  // dtype-lint-expect: DL101
  }

 private:
  torch::Dtype dtype_;
  torch::nn::Linear encoder_{8, 8}, scorer_{8, 8}, head_{8, 2};
};

void trainGroups(const TrainConfig& cfg) {
  GroupTrainer trainer(cfg);
  trainer.forward(torch::randn({4, 8})).sum().backward();
}

// A dtype field the command line sets to one of a few dtypes (default
// BFloat16, Half with a flag) chooses autocast's dtype: analyzed per dtype.
// A custom Function applied under it meets Half products in its backward.
struct AsrConfig {
  torch::Dtype amp_dtype = torch::kBFloat16;
};

AsrConfig asrConfig(int argc, char** argv) {
  AsrConfig cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--amp-dtype=fp16") cfg.amp_dtype = torch::kHalf;
    else if (arg == "--amp-dtype=bf16") cfg.amp_dtype = torch::kBFloat16;
  }
  return cfg;
}

struct ProjectHalfKeepFloat : public torch::autograd::Function<ProjectHalfKeepFloat> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, torch::Tensor w) {
    auto a = x.mm(w.t());
    ctx->save_for_backward({x, w});
    return a;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    auto dx = grads[0].mm(saved[1]);  // dtype-lint-expect: DL103:15 {{'mm' in a custom autograd backward on operands of different dtypes ('grads[0]'}}
    return {dx, grads[0].t().mm(saved[0])};
  }
};

class AutocastRegion {
 public:
  explicit AutocastRegion(torch::Dtype dtype) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
  ~AutocastRegion() {
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
};

class AsrTrainer {
 public:
  explicit AsrTrainer(const AsrConfig& cfg) : cfg_(cfg) {}
  void step(const torch::Tensor& feats) {
    torch::Tensor out;
    {
      AutocastRegion region(cfg_.amp_dtype);
      out = ProjectHalfKeepFloat::apply(feats, weight_);
    }
    out.to(torch::kFloat).sum().backward();
  }

 private:
  AsrConfig cfg_;
  torch::Tensor weight_ = torch::randn({8, 8}, torch::requires_grad());
};

// PRECISION from the environment, tested as a C string (`prec && std::string(prec) == "fp16"`),
// passed to a class template's constructor and kept in a dtype member that
// converts the model. The bmm of Float probabilities with Half values raises,
// and nothing after it is reported again; the log_softmax of the Half logits is.
struct CharLmImpl : torch::nn::Module {
  CharLmImpl() {
    value = register_module("value", torch::nn::Linear(8, 8));
    out = register_module("out", torch::nn::Linear(8, 16));
  }
  torch::nn::Linear value{nullptr}, out{nullptr};
};
TORCH_MODULE(CharLm);

template <typename Model>
class CharLmTrainer {
 public:
  CharLmTrainer(Model model, torch::Dtype dtype) : model_(std::move(model)), dtype_(dtype) { model_->to(dtype_); }
  torch::Tensor logits(const torch::Tensor& x) {
    auto probs = torch::softmax(x.matmul(x.transpose(1, 2)), -1, torch::kFloat);
    auto context = torch::bmm(probs, model_->value(x));  // dtype-lint-expect: DL101
    return model_->out(x + context);
  }
  void step(const torch::Tensor& x) {
    auto logp = torch::log_softmax(logits(x), -1);  // dtype-lint-expect: DL105:17 {{'log_softmax' computed in Half outside autocast}}
    logp.to(torch::kFloat).mean().backward();
  }

 private:
  Model model_;
  torch::Dtype dtype_;
};

void trainCharLm() {
  const char* prec = std::getenv("PRECISION");
  const torch::Dtype dtype = (prec && std::string(prec) == "fp16") ? torch::kHalf : torch::kFloat;
  CharLmTrainer<CharLm> trainer(CharLm(), dtype);
  trainer.step(torch::randn({2, 4, 8}).to(dtype));
}

// The same setting, with the probabilities kept in the model's dtype and the
// log-probabilities upcast: clean for every value.
template <typename Model>
class CharLmTrainerUpcast {
 public:
  CharLmTrainerUpcast(Model model, torch::Dtype dtype) : model_(std::move(model)), dtype_(dtype) { model_->to(dtype_); }
  void step(const torch::Tensor& x) {
    auto probs = torch::softmax(x.matmul(x.transpose(1, 2)), -1, torch::kFloat).to(dtype_);
    auto context = torch::bmm(probs, model_->value(x));
    auto logp = torch::log_softmax(model_->out(x + context), -1, torch::kFloat);
    logp.mean().backward();
  }

 private:
  Model model_;
  torch::Dtype dtype_;
};

void trainCharLmUpcast() {
  const char* prec = std::getenv("PRECISION");
  const torch::Dtype dtype = (prec && std::string(prec) == "fp16") ? torch::kHalf : torch::kFloat;
  CharLmTrainerUpcast<CharLm> trainer(CharLm(), dtype);
  trainer.step(torch::randn({2, 4, 8}).to(dtype));
}

// An environment variable with a default when unset, looked up in a map with
// a fallback for unknown names: the default names the Half path.
static torch::Dtype dtype_from_environment() {
  static const std::map<std::string, torch::Dtype> kDtypes{{"fp16", torch::kHalf}, {"fp32", torch::kFloat}};
  const char* name = std::getenv("TRAIN_DTYPE");
  auto it = kDtypes.find(name ? name : "fp16");
  return it == kDtypes.end() ? torch::kHalf : it->second;
}

void train_with_environment_dtype() {
  torch::nn::Linear head(8, 2);
  auto features = torch::randn({4, 8}).to(dtype_from_environment());
  head(features);  // dtype-lint-expect: DL101 (TRAIN_DTYPE "fp16")
}

// A lookup whose fallback for names it does not hold is Float: each name
// gives its own dtype (the setting's default is "fp32", as parsed above).
static torch::Dtype param_dtype_of(const std::string& precision) {
  static const std::map<std::string, torch::Dtype> table{{"fp16", torch::kHalf}, {"fp32", torch::kFloat}};
  auto it = table.find(precision);
  return it == table.end() ? torch::kFloat : it->second;
}

void train_with_fallback_lookup(const TrainConfig& cfg) {
  torch::nn::Linear head(8, 2);
  auto features = torch::randn({4, 8}).to(param_dtype_of(cfg.precision));
  head(features);  // dtype-lint-expect: DL101 (precision "fp16")
}

// The same asked with count() first; Float for the names the map lacks.
void train_with_counted_lookup(const TrainConfig& cfg) {
  torch::nn::Linear head(8, 2);
  const torch::Dtype dtype = kDtypes.count(cfg.precision) ? kDtypes.at(cfg.precision) : torch::kFloat;
  head(torch::randn({4, 8}).to(dtype));  // dtype-lint-expect: DL101 (precision "fp16" or "bf16")
  head(torch::randn({4, 8}).to(kDtypes.count(cfg.precision) > 0 ? torch::kFloat : torch::kFloat));
}

// Settings parsed into a struct a trainer keeps: the autocast dtype from a map
// when the environment names one (Half by default), autocast on unless it is
// Float, the guard switched by that flag. Training is clean under every value;
// the evaluation feeds batches in the autocast dtype to the Float model.
struct RunSettings {
  torch::Dtype amp_dtype = torch::kHalf;
  bool amp = true;
};

static RunSettings settings_from_environment() {
  static const std::map<std::string, torch::Dtype> kAmpDtypes = {
      {"fp16", torch::kHalf}, {"bf16", torch::kBFloat16}, {"fp32", torch::kFloat}};
  RunSettings s;
  if (const char* name = std::getenv("AMP_DTYPE")) {
    auto it = kAmpDtypes.find(name);
    if (it != kAmpDtypes.end()) s.amp_dtype = it->second;
  }
  s.amp = s.amp_dtype != torch::kFloat;
  return s;
}

class CudaAutocastScope {
 public:
  CudaAutocastScope(at::ScalarType dtype, bool enabled) {
    prev_enabled_ = at::autocast::is_enabled();
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  }
  ~CudaAutocastScope() {
    at::autocast::clear_cache();
    at::autocast::set_enabled(prev_enabled_);
  }

 private:
  bool prev_enabled_ = false;
};

class SettingsTrainer {
 public:
  explicit SettingsTrainer(const RunSettings& s) : s_(s), model_(torch::nn::Linear(8, 2)) {}
  void train() {
    auto x = torch::randn({4, 8}).to(s_.amp_dtype);
    CudaAutocastScope autocast(s_.amp_dtype, s_.amp);
    model_(x).sum().backward();
  }
  void evaluate() {
    auto x = torch::randn({4, 8}).to(s_.amp_dtype);
    model_(x);  // dtype-lint-expect: DL101 (AMP_DTYPE "fp16" or "bf16")
  }

 private:
  RunSettings s_;
  torch::nn::Linear model_;
};

void train_with_settings() {
  SettingsTrainer trainer(settings_from_environment());
  trainer.train();
  trainer.evaluate();
}

// A local dtype given a default and reassigned by an if-chain on a string
// setting: the dtype each value leaves, not the initializer's.
void trainWithReassignedDtype(int argc, char** argv) {
  std::string dtype_name = "fp16";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--dtype") dtype_name = argv[i + 1];
  torch::Dtype dtype = torch::kFloat;
  if (dtype_name == "fp16") dtype = torch::kHalf;
  else if (dtype_name != "fp32") throw std::invalid_argument("--dtype must be fp16 or fp32");
  torch::nn::Linear model(8, 2);
  model->to(dtype);
  model(torch::randn({4, 8})).sum().backward();  // dtype-lint-expect: DL101 ('dtype_name' "fp16")
}

// Reassigned to Float after a Half default: the Float input matches.
void trainWithDtypeReassignedToFloat() {
  torch::Dtype dtype = torch::kHalf;
  dtype = torch::kFloat;
  torch::nn::Linear model(8, 2);
  model->to(dtype);
  model(torch::randn({4, 8})).sum().backward();
}

// An enum resolved by a switch in a helper: each case's dtype on its own path.
torch::Dtype dtypeOf(Precision precision) {
  switch (precision) {
    case Precision::kBFloat16:
      return torch::kBFloat16;
    default:
      return torch::kFloat;
  }
}

void trainWithSwitch(const EnumConfig& cfg) {
  torch::nn::Linear model(8, 2);
  model->to(dtypeOf(cfg.precision));
  model(torch::randn({4, 8})).sum().backward();  // dtype-lint-expect: DL101 (Precision::kBFloat16)
}

// The input converted by the same switch: consistent under every value.
void trainWithSwitchConsistently(const EnumConfig& cfg) {
  torch::nn::Linear model(8, 2);
  const torch::Dtype dtype = dtypeOf(cfg.precision);
  model->to(dtype);
  model(torch::randn({4, 8}).to(dtype)).to(torch::kFloat).sum().backward();
}

// A config's dtype field set from a map looked up with the command line's
// value itself (no setting variable): each of the map's dtypes.
struct MapConfig {
  torch::Dtype dtype = torch::kBFloat16;
};

MapConfig parseMapConfig(int argc, char** argv) {
  static const std::map<std::string, torch::Dtype> dtypes{{"bf16", torch::kBFloat16}, {"fp32", torch::kFloat}};
  MapConfig c;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--dtype") c.dtype = dtypes.at(argv[i + 1]);
  return c;
}

void trainWithCommandLineLookup(int argc, char** argv) {
  const MapConfig cfg = parseMapConfig(argc, argv);
  torch::nn::Linear model(8, 2);
  model->to(cfg.dtype);
  model(torch::randn({4, 8}).to(cfg.dtype)).sum().backward();  // dtype-lint-expect: DL106 (BFloat16)
}

void trainWithCommandLineLookupInFloat(int argc, char** argv) {
  const MapConfig cfg = parseMapConfig(argc, argv);
  torch::nn::Linear model(8, 2);
  model->to(cfg.dtype);
  model(torch::randn({4, 8}).to(cfg.dtype)).to(torch::kFloat).sum().backward();
}

// The table of precisions kept as a function's static local, looked up by a
// helper with find(); the config a predicate method of its own reads.
const std::map<std::string, torch::ScalarType>& precisionTable() {
  static const std::map<std::string, torch::ScalarType> table = {{"fp32", torch::kFloat}, {"fp16", torch::kHalf}};
  return table;
}

torch::ScalarType lookupPrecision(const std::string& name) {
  auto it = precisionTable().find(name);
  if (it == precisionTable().end()) throw std::invalid_argument("unsupported precision " + name);
  return it->second;
}

struct PureConfig {
  std::string precision = "fp16";
  bool half() const { return precision == "fp16"; }
  torch::ScalarType weights() const { return half() ? torch::kHalf : torch::kFloat; }
};

void trainPureLowPrecisionFromATable(const std::string& requested) {
  torch::nn::Linear model(8, 1);
  model->to(lookupPrecision(requested));
  const torch::ScalarType dtype = lookupPrecision(requested);
  auto loss = torch::mse_loss(model(torch::randn({4, 8}).to(dtype)), torch::zeros({4, 1}, dtype));  // dtype-lint-expect: DL105
}

void trainPureLowPrecisionFromAPredicate(const PureConfig& cfg) {
  torch::nn::Linear model(8, 1);
  model->to(cfg.weights());
  model(torch::randn({4, 8}));  // dtype-lint-expect: DL101
}

// A helper that maps the name to a dtype with an if-chain decides precision:
// it is analyzed per value before the scaler's own switches (its options'
// `enabled`, the per-optimizer stage it writes, a step's finite check), which
// would otherwise fill the configurations first. The trainer keeps its own
// copy of the options it was given.
torch::Dtype parseStorageDtype(const std::string& s) {
  if (s == "fp16" || s == "half") return torch::kHalf;
  if (s == "fp32" || s == "float") return torch::kFloat;
  throw std::invalid_argument("unknown storage dtype " + s);
}

struct StorageOptions {
  torch::Dtype storage = torch::kFloat;
  bool scaling = true;
};

StorageOptions parseStorageOptions(int argc, char** argv) {
  StorageOptions o;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--storage")) o.storage = parseStorageDtype(argv[++i]);
  return o;
}

struct StagedScalerOptions {
  bool enabled = true;
};

namespace staged {
class GradScaler {
 public:
  explicit GradScaler(StagedScalerOptions o) : opts_(o) {}
  torch::Tensor scale(const torch::Tensor& loss) { return opts_.enabled ? loss * scale_ : loss; }
  void step(torch::optim::Optimizer& opt) {
    if (!opts_.enabled) {
      opt.step();
      return;
    }
    auto& st = states_[&opt];
    if (st.stage == Stage::Ready) {
      std::vector<at::Tensor> grads;
      for (auto& group : opt.param_groups())
        for (auto& p : group.params()) grads.push_back(p.grad());
      at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale_);
      st.stage = Stage::Unscaled;
    }
    const bool finite = found_inf_.item<float>() == 0.f;
    if (finite) opt.step();
    st.stage = Stage::Stepped;
  }
  void update() { states_.clear(); }

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct OptimizerState {
    Stage stage = Stage::Ready;
  };
  StagedScalerOptions opts_;
  torch::Tensor scale_ = torch::full({1}, 1024.0);
  torch::Tensor found_inf_ = torch::zeros({1});
  torch::Tensor inv_scale_ = torch::ones({1});
  std::map<torch::optim::Optimizer*, OptimizerState> states_;
};
}  // namespace staged

class StorageTrainer {
 public:
  explicit StorageTrainer(const StorageOptions& opts)
      : opts_(opts), model_(8, 1), scaler_(StagedScalerOptions{opts.scaling}) {
    model_->to(opts_.storage);
    opt_ = std::make_unique<torch::optim::SGD>(model_->parameters(), 0.1);
  }
  void iteration() {
    opt_->zero_grad();
    auto loss = model_(torch::randn({4, 8}).to(opts_.storage)).to(torch::kFloat).sum();
    scaler_.scale(loss).backward();
    scaler_.step(*opt_);  // dtype-lint-expect: DL202 (with --storage fp16)
    scaler_.update();
  }

 private:
  StorageOptions opts_;
  torch::nn::Linear model_;
  std::unique_ptr<torch::optim::SGD> opt_;
  staged::GradScaler scaler_;
};

int trainWithStorageFromTheCommandLine(int argc, char** argv) {
  StorageTrainer trainer(parseStorageOptions(argc, argv));
  for (int i = 0; i < 3; ++i) trainer.iteration();
  return 0;
}

// An enum setting parsed from a name and handed to helpers: the field is
// analyzed per enumerator, and each helper's parameter holds the value the
// field was given (not a setting of its own that could disagree with it).
enum class Mode { kFp32, kFp16, kBf16 };

Mode parseMode(const std::string& s) {
  if (s == "fp16") return Mode::kFp16;
  if (s == "bf16") return Mode::kBf16;
  return Mode::kFp32;
}

torch::ScalarType autocastDtypeOf(Mode m) { return m == Mode::kBf16 ? torch::kBFloat16 : torch::kHalf; }

const char* modeName(Mode m) {
  switch (m) {
    case Mode::kFp32: return "fp32";
    case Mode::kFp16: return "fp16";
    case Mode::kBf16: return "bf16";
  }
  return "?";
}

struct ModeConfig {
  Mode mode = Mode::kFp32;
};

void evaluateUnderMode(const ModeConfig& cfg, torch::nn::Linear& model) {
  std::cout << modeName(cfg.mode) << "\n";
  torch::Tensor logits;
  {
    at::autocast::set_enabled(cfg.mode != Mode::kFp32);
    at::autocast::set_autocast_gpu_dtype(autocastDtypeOf(cfg.mode));
    logits = model(torch::randn({4, 8}, torch::kCUDA));
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
  }
  auto probs = torch::softmax(logits, 1);  // dtype-lint-expect: DL105 (with Mode::kFp16)
  auto safe = torch::softmax(logits, 1, torch::kFloat);
}

int evaluateWithModeFromTheCommandLine(int argc, char** argv) {
  ModeConfig cfg;
  if (argc > 1) cfg.mode = parseMode(argv[1]);
  torch::nn::Linear model(8, 2);
  evaluateUnderMode(cfg, model);
  return 0;
}

// A dtype field every write gives the same dtype: its default, and a table
// (returned by a function) that only holds that dtype, looked up with a value
// read from a parsed file. The field is BFloat16 wherever it is read.
const std::map<std::string, torch::ScalarType>& lowPrecisionTable() {
  static const std::map<std::string, torch::ScalarType> table = {{"bfloat16", torch::kBFloat16},
                                                                 {"bf16", torch::kBFloat16}};
  return table;
}

struct FileConfig {
  bool amp = true;
  torch::ScalarType amp_dtype = torch::kBFloat16;
};

FileConfig configFromPairs(std::map<std::string, std::string> pairs) {
  FileConfig cfg;
  if (pairs.count("amp")) cfg.amp = pairs["amp"] == "true";
  if (pairs.count("amp_dtype")) {
    auto it = lowPrecisionTable().find(pairs["amp_dtype"]);
    if (it == lowPrecisionTable().end()) throw std::invalid_argument("unsupported amp_dtype");
    cfg.amp_dtype = it->second;
  }
  return cfg;
}

void encoderUnderAutocastHeadOutside(const FileConfig& cfg, torch::nn::Linear& encoder, torch::nn::Linear& head) {
  torch::Tensor pooled;
  at::autocast::set_autocast_gpu_dtype(cfg.amp_dtype);
  at::autocast::set_enabled(cfg.amp);
  pooled = encoder(torch::randn({4, 8}, torch::kCUDA));
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  head(pooled);  // dtype-lint-expect: DL101 (with amp true)
}

int trainWithConfigFromAFile(std::map<std::string, std::string> pairs) {
  const FileConfig cfg = configFromPairs(std::move(pairs));
  torch::nn::Linear encoder(8, 8), head(8, 2);
  encoderUnderAutocastHeadOutside(cfg, encoder, head);
  return 0;
}

// A dtype held in a std::optional and read with `*`.
void autocastToTheOptionalDtype(std::optional<torch::ScalarType> dtype, torch::nn::Linear& model) {
  if (!dtype) return;
  at::autocast::set_autocast_gpu_dtype(*dtype);
  at::autocast::set_enabled(true);
  auto logits = model(torch::randn({4, 8}, torch::kCUDA));
  at::autocast::set_enabled(false);
  at::autocast::clear_cache();
  torch::softmax(logits, 1);  // dtype-lint-expect: DL105
}

void trainWithAnOptionalHalf() {
  torch::nn::Linear model(8, 2);
  autocastToTheOptionalDtype(torch::kHalf, model);
}

// Options parsed by the class's own static factory into a fresh object: a
// setting (a method writing its own member would make it a state).
enum class RunPrecision { kFp32, kFp16, kBf16 };

struct RunOptions {
  RunPrecision precision = RunPrecision::kFp32;
  torch::Dtype paramDtype() const {
    switch (precision) {
      case RunPrecision::kFp16:
        return torch::kHalf;
      case RunPrecision::kBf16:
        return torch::kBFloat16;
      default:
        return torch::kFloat;
    }
  }
  static RunOptions fromEnv() {
    RunOptions o;
    const char* p = std::getenv("PRECISION");
    const std::string precision = p ? p : "fp32";
    if (precision == "fp16" || precision == "half") o.precision = RunPrecision::kFp16;
    else if (precision == "bf16") o.precision = RunPrecision::kBf16;
    return o;
  }
};

void trainWithOptionsFromAStaticFactory(torch::nn::Linear& model, const RunOptions& opts) {
  model->to(opts.paramDtype());
  torch::optim::Adam optimizer(model->parameters());  // dtype-lint-expect: DL304 (RunPrecision::kFp16)
}

// A scaler whose `enabled` argument is false on this path (no loss scaling in
// pure-Half mode) does nothing: its step() is the optimizer's.
enum class PolicyMode { kFp32, kAmpFp16, kPureHalf };

struct PrecisionPolicy {
  PolicyMode mode = PolicyMode::kFp32;
  torch::Dtype paramDtype() const { return mode == PolicyMode::kPureHalf ? torch::kHalf : torch::kFloat; }
  bool needsLossScaling() const { return mode == PolicyMode::kAmpFp16; }
};

PrecisionPolicy policyFrom(const char* s) {
  PrecisionPolicy p;
  const std::string v = s ? s : "fp32";
  if (v == "amp_fp16") p.mode = PolicyMode::kAmpFp16;
  if (v == "half") p.mode = PolicyMode::kPureHalf;
  return p;
}

namespace toggled {
class GradScaler {
 public:
  explicit GradScaler(bool enabled) : enabled_(enabled) {}
  torch::Tensor scale(const torch::Tensor& loss) { return enabled_ ? loss * 1024.0 : loss; }
  void step(torch::optim::Optimizer& opt) { opt.step(); }
  void update() {}

 private:
  bool enabled_;
};
}  // namespace toggled

void trainWithAScalerDisabledForPureHalf(const PrecisionPolicy& policy) {
  torch::nn::Linear model(8, 1);
  model->to(policy.paramDtype());
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  toggled::GradScaler scaler(policy.needsLossScaling());
  auto loss = model(torch::randn({4, 8}).to(policy.paramDtype())).to(torch::kFloat).sum();
  scaler.scale(loss).backward();
  scaler.step(optimizer);
  scaler.update();
}

// The scaler's `enabled` argument tests the setting (`amp == "fp16"`): the
// value it names is analyzed, and the finding says it needs that value.
struct GanOptions {
  std::string amp = "off";  // off | fp16 | bf16
};

GanOptions ganOptions(const char* amp) {
  GanOptions o;
  if (amp) o.amp = amp;
  return o;
}

void trainWithAScalerEnabledByAString(const GanOptions& o) {
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto scaler = std::make_unique<toggled::GradScaler>(o.amp == "fp16");
  scaler->scale(model(torch::randn({4, 8})).sum()).backward();
  optimizer.step();  // dtype-lint-expect: DL208 ("fp16")
}

// An optional autocast dtype from a map (nullopt: no autocast) decides whether
// a scaler is made: `amp_dtype_ == torch::kHalf` is optional's operator==, a
// dtype comparison like the built-in one. Under "bf16" the scaler is null and
// the scaled step is not taken.
const std::map<std::string, std::optional<torch::Dtype>> kAmpModes = {
    {"fp32", std::nullopt}, {"fp16", torch::kHalf}, {"bf16", torch::kBFloat16}};

struct AmpSpec {
  std::string precision = "fp32";
  bool scaleAnyLowPrecision = false;
};

class OptionalAmpTrainer {
 public:
  explicit OptionalAmpTrainer(const AmpSpec& spec) : spec_(spec), model_(8, 1), optimizer_(model_->parameters(), 0.1) {
    amp_dtype_ = kAmpModes.at(spec_.precision);
    if (spec_.scaleAnyLowPrecision) {
      if (amp_dtype_ != torch::kFloat && amp_dtype_.has_value()) scaler_ = std::make_unique<GradScaler>();
    } else if (amp_dtype_ == torch::kHalf) {
      scaler_ = std::make_unique<GradScaler>();
    }
  }
  void fit() {
    for (int step = 0; step < 10; ++step) {
      if (scaler_) stepScaled();
      else stepPlain();
    }
  }

 private:
  torch::Tensor loss() {
    if (!amp_dtype_) return model_(torch::randn({4, 8})).sum();
    at::autocast::set_autocast_cpu_dtype(*amp_dtype_);
    at::autocast::set_cpu_enabled(true);
    auto out = model_(torch::randn({4, 8})).to(torch::kFloat).sum();
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    return out;
  }
  void stepScaled() {
    optimizer_.zero_grad();
    scaler_->scale(loss()).backward();  // dtype-lint-expect: DL209 ("bf16")
    scaler_->unscale_(optimizer_);
    torch::nn::utils::clip_grad_norm_(model_->parameters(), 1.0);
    scaler_->step(optimizer_);
    scaler_->update();
  }
  void stepPlain() {
    optimizer_.zero_grad();
    loss().backward();
    optimizer_.step();
  }

  AmpSpec spec_;
  torch::nn::Linear model_;
  torch::optim::SGD optimizer_;
  std::optional<torch::Dtype> amp_dtype_;
  std::unique_ptr<GradScaler> scaler_;
};

void trainWithAnOptionalAutocastDtype(int argc, char** argv) {
  AmpSpec spec;
  if (argc > 1) spec.precision = argv[1];
  spec.scaleAnyLowPrecision = argc > 2;
  OptionalAmpTrainer(spec).fit();
}

// An enum field a parser fills from a table of enumerators (`return
// it->second;`), handed to a helper that maps it to a dtype: the field is
// analyzed per enumerator of the table, as an if-chain parser's would be.
enum class TablePrecision { kFP32, kFP16, kBF16 };

TablePrecision parseTablePrecision(const std::string& name) {
  static const std::map<std::string, TablePrecision> table = {
      {"fp32", TablePrecision::kFP32}, {"fp16", TablePrecision::kFP16}, {"bf16", TablePrecision::kBF16}};
  auto it = table.find(name);
  if (it == table.end()) throw std::invalid_argument("unknown precision '" + name + "'");
  return it->second;
}

torch::Dtype tablePrecisionDtype(TablePrecision p) {
  return p == TablePrecision::kFP16 ? torch::kHalf : p == TablePrecision::kBF16 ? torch::kBFloat16 : torch::kFloat;
}

struct TableConfig {
  TablePrecision precision = TablePrecision::kFP32;
};

class TablePrecisionTrainer {
 public:
  explicit TablePrecisionTrainer(const TableConfig& cfg) : dtype_(tablePrecisionDtype(cfg.precision)) {
    model_->to(dtype_);
  }
  void step(const torch::Tensor& x, const torch::Tensor& y) {
    auto loss = torch::mse_loss(model_(x.to(dtype_)), y.to(dtype_));  // dtype-lint-expect: DL105 (fp16)
    // Clean look-alike: the loss in Float whatever the precision.
    auto safe = torch::mse_loss(model_(x.to(dtype_)).to(torch::kFloat), y);
    safe.backward();
  }

 private:
  torch::Dtype dtype_;
  torch::nn::Linear model_{8, 1};
};

void trainWithAPrecisionFromATable(int argc, char** argv) {
  TableConfig cfg;
  if (argc > 1) cfg.precision = parseTablePrecision(argv[1]);
  TablePrecisionTrainer(cfg).step(torch::randn({4, 8}), torch::randn({4, 1}));
}

// An enum field set straight from a table of enumerators (`a.precision =
// modes.at(argv[1])`), no parser function between: the table's enumerators
// are its values (set AI p17).
enum class StorageMode { kFp32, kAmp, kPureFp16 };

struct StorageArgs {
  StorageMode precision = StorageMode::kAmp;
};

StorageArgs storageArgs(int argc, char** argv) {
  static const std::map<std::string, StorageMode> modes = {
      {"fp32", StorageMode::kFp32}, {"amp", StorageMode::kAmp}, {"pure_fp16", StorageMode::kPureFp16}};
  StorageArgs a;
  if (argc > 1) a.precision = modes.at(argv[1]);
  return a;
}

void trainWithAStorageModeFromATable(int argc, char** argv) {
  const StorageArgs a = storageArgs(argc, argv);
  torch::nn::Linear model(8, 1);
  model->to(a.precision == StorageMode::kPureFp16 ? torch::kHalf : torch::kFloat);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));  // dtype-lint-expect: DL304
}
