// Settings read from a config object by key: `cfg["precision"]` of a
// key=value config class, `cfg.get<std::string>("amp", "off")`, a bool getter
// `cfg.flag("fused")`, `env_or("AMP", "fp32")`. Each (config class or reader,
// key) is one setting, whichever function reads it: the analysis runs once
// per value the program names, and a finding says which it needs.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "common/grad_scaler.h"

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

class KeyValueConfig {
 public:
  KeyValueConfig() : kv_{{"param_dtype", "fp32"}, {"amp", "off"}, {"fused", "0"}} {}
  void override_from_args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) kv_[a.substr(2, eq - 2)] = a.substr(eq + 1);
    }
  }
  const std::string& operator[](const std::string& key) const { return kv_.at(key); }
  template <typename T>
  T get(const std::string& key, const T& fallback) const {
    const auto it = kv_.find(key);
    if (it == kv_.end()) return fallback;
    T value;
    std::istringstream(it->second) >> value;
    return value;
  }
  bool flag(const std::string& key) const { return (*this)[key] == "1" || (*this)[key] == "true"; }

 private:
  std::map<std::string, std::string> kv_;
};

// The dtype is chosen in main from `cfg["param_dtype"]`; the workspace a
// helper keeps is Float whatever it is.
torch::Tensor attentionScores(const torch::Tensor& q, const torch::Tensor& k, torch::Tensor& workspace,
                              const KeyValueConfig& cfg) {
  if (!cfg.flag("fused")) return torch::bmm(q, k.transpose(1, 2));
  if (!workspace.defined()) workspace = torch::empty({q.size(0), q.size(1), k.size(1)});
  at::bmm_out(workspace, q, k.transpose(1, 2));  // dtype-lint-expect: DL102 ("fp16")
  return workspace;
}

void trainWithAKeyValueConfig(int argc, char** argv) {
  KeyValueConfig cfg;
  cfg.override_from_args(argc, argv);
  const torch::Dtype dtype = cfg["param_dtype"] == "fp16" ? torch::kHalf : torch::kFloat;
  torch::nn::Linear q(16, 16), k(16, 16);
  q->to(dtype);
  k->to(dtype);
  torch::Tensor workspace;
  const auto x = torch::randn({4, 8, 16}).to(dtype);
  const auto scores = attentionScores(q(x), k(x), workspace, cfg);
  const auto mixed = torch::matmul(scores, torch::randn({8, 16}));  // dtype-lint-expect: DL101 ("fp16")
  mixed.sum().backward();
}

// The clean look-alike: the workspace takes the dtype the config chose.
torch::Tensor attentionScoresInTheirDtype(const torch::Tensor& q, const torch::Tensor& k, torch::Tensor& workspace,
                                          const KeyValueConfig& cfg) {
  if (!cfg.flag("fused")) return torch::bmm(q, k.transpose(1, 2));
  if (!workspace.defined()) workspace = torch::empty({q.size(0), q.size(1), k.size(1)}, q.options());
  at::bmm_out(workspace, q, k.transpose(1, 2));
  return workspace;
}

void trainWithAKeyValueConfigCleanly(int argc, char** argv) {
  KeyValueConfig cfg;
  cfg.override_from_args(argc, argv);
  const torch::Dtype dtype = cfg["param_dtype"] == "fp16" ? torch::kHalf : torch::kFloat;
  torch::nn::Linear q(16, 16), k(16, 16);
  q->to(dtype);
  k->to(dtype);
  torch::Tensor workspace;
  const auto x = torch::randn({4, 8, 16}).to(dtype);
  const auto scores = attentionScoresInTheirDtype(q(x), k(x), workspace, cfg);
  const auto out = torch::matmul(scores, torch::randn({8, 16}, scores.options()));
  out.to(torch::kFloat).sum().backward();
}

// A typed getter with a default chooses the autocast dtype; the scaler is made
// for any autocast, BFloat16 included.
void trainWithATypedGetter(int argc, char** argv) {
  KeyValueConfig cfg;
  cfg.override_from_args(argc, argv);
  torch::nn::Linear model(8, 1);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  GradScaler scaler;
  for (int step = 0; step < 10; ++step) {
    optimizer.zero_grad();
    if (cfg.get<std::string>("amp", "off") != "off") {
      const bool bf16 = cfg.get<std::string>("amp", "off") == "bf16";
      at::autocast::set_autocast_cpu_dtype(bf16 ? torch::kBFloat16 : torch::kHalf);
      at::autocast::set_cpu_enabled(true);
    }
    auto loss = model(torch::randn({4, 8})).to(torch::kFloat).sum();
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    scaler.scale(loss).backward();  // dtype-lint-expect: DL209 ("bf16")
    scaler.step(optimizer);
    scaler.update();
  }
}

// A reader function with the key as its argument: the same setting wherever it is read.
std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

torch::Dtype paramDtype() { return env_or("TRAIN_DTYPE", "fp32") == "fp16" ? torch::kHalf : torch::kFloat; }

void trainWithAnEnvironmentReader() {
  torch::nn::Linear model(8, 4);
  model->to(paramDtype());
  GradScaler scaler;
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));  // dtype-lint-expect: DL304
  auto loss = model(torch::randn({2, 8}).to(paramDtype())).to(torch::kFloat).sum();
  scaler.scale(loss).backward();
  scaler.unscale_(optimizer);  // dtype-lint-expect: DL202 ("fp16")
  scaler.step(optimizer);
  scaler.update();
}

// An INI reader's section and key together name the setting: "train.amp" and
// "train.half_teacher" are two settings, and a finding needs one of each.
class IniFile {
 public:
  bool get_bool(const std::string& section, const std::string& key, bool def) const {
    const auto s = data_.find(section);
    if (s == data_.end() || !s->second.count(key)) return def;
    return s->second.at(key) == "true";
  }

 private:
  std::map<std::string, std::map<std::string, std::string>> data_;
};

void distillWithIniSections(const IniFile& ini) {
  const bool amp = ini.get_bool("train", "amp", true);
  const bool halfTeacher = ini.get_bool("train", "half_teacher", false);
  torch::nn::Linear student(8, 4), teacher(8, 4);
  if (halfTeacher) teacher->to(torch::kHalf);
  torch::optim::SGD optimizer(student->parameters(), 0.1);
  const auto x = torch::randn({2, 8});
  at::autocast::set_cpu_enabled(amp);
  const auto soft = teacher(x);  // dtype-lint-expect: DL101 ("half_teacher")
  auto loss = (student(x) - soft.detach()).pow(2).to(torch::kFloat).mean();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  loss.backward();
  optimizer.step();
}

// A reader function that takes the parsed document first, then section, key
// and default: `lookup(cfg, "model", "dtype", "float32")` is the setting
// "model.dtype", and "train.amp" another.
using Document = std::map<std::string, std::map<std::string, std::string>>;

std::string lookup(const Document& d, const std::string& sec, const std::string& key, const std::string& dflt) {
  const auto s = d.find(sec);
  if (s == d.end() || !s->second.count(key)) return dflt;
  return s->second.at(key);
}

void trainWithADocumentReader(const Document& cfg) {
  const torch::Dtype dtype = lookup(cfg, "model", "dtype", "float32") == "float16" ? torch::kHalf : torch::kFloat;
  const bool amp = lookup(cfg, "train", "amp", "false") == "true";
  torch::nn::Linear model(8, 4);
  model->to(dtype);
  at::autocast::set_cpu_enabled(amp);
  auto y = model(torch::randn({2, 8}));  // dtype-lint-expect: DL101 ("float16")
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
}
