// The Python front end on real Python: every `# dtype-lint-expect` marker of
// samples/python/ that names a rule checked statically is found, and nothing
// else; messages name dtypes and related places; settings, imports and
// classes are followed; bad input never stops it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "expectations.h"
#include "python_analysis.h"

namespace dtype_lint::testing {
namespace {

namespace fs = std::filesystem;

std::string sampleName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::relative(info.param, std::string(DTYPE_LINT_SOURCE_DIR) + "/samples/python").string();
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class PythonSamplesStatically : public ::testing::TestWithParam<std::string> {};

// The same markers the runtime test requires at run time, where the rule is
// checked statically (DL301-DL303 are the runtime's alone).
TEST_P(PythonSamplesStatically, FindingsMatchTheStaticMarkers) {
  const std::string script = GetParam();
  const python::PythonAnalysisResult result = python::analyzePythonFiles({script});
  const std::string diff =
      compare(checkedBy(FrontEnd::Static, readMarkers(script)), findingsIn(result.findings, script), script);
  EXPECT_TRUE(diff.empty()) << diff;
  EXPECT_TRUE(result.toolNotes.empty()) << result.toolNotes.front().message;
}
INSTANTIATE_TEST_SUITE_P(Scripts, PythonSamplesStatically,
                         ::testing::ValuesIn(sourceFiles(std::string(DTYPE_LINT_SOURCE_DIR) + "/samples/python",
                                                         ".py")),
                         sampleName);

// A program written to a temporary directory: files by name.
class PythonProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per process: the sanitizer build runs the same tests at the same time.
    dir_ = fs::temp_directory_path() / ("dtype_lint_python_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  std::vector<Finding> findings(const std::vector<std::string>& files) {
    return python::analyzePythonFiles(files).findings;
  }
  fs::path dir_;
};

// The one finding there is, as rule:line.
std::string only(const std::vector<Finding>& findings) {
  if (findings.size() != 1) return fmt::format("{} findings", findings.size());
  return fmt::format("{}:{}", findings[0].rule->id, findings[0].location.line);
}

// `text` with its first `placeholder` replaced by `value`: variants of one program.
std::string withPlaceholder(std::string text, std::string_view placeholder, const std::string& value) {
  text.replace(text.find(placeholder), placeholder.size(), value);
  return text;
}

// Every finding as rule:line, sorted, joined by commas.
std::string ruleLines(const std::vector<Finding>& findings) {
  std::vector<std::string> all;
  for (const Finding& f : findings) all.push_back(fmt::format("{}:{}", f.rule->id, f.location.line));
  std::sort(all.begin(), all.end());
  return fmt::format("{}", fmt::join(all, ","));
}

const Finding* withRule(const std::vector<Finding>& findings, std::string_view rule) {
  for (const Finding& f : findings)
    if (f.rule->id == rule) return &f;
  return nullptr;
}

TEST_F(PythonProgram, MixedMatmulInAModulesForwardNamesBothDtypesAndTheCall) {
  const std::string file = write("train.py", R"(import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def forward(self, x):
        return self.proj(x)


head = Head()
features = torch.randn(8, 16).to(torch.float16)
print(head(features))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL101:11");
  EXPECT_NE(out[0].message.find("(input 'x': Half, the parameters of 'self.proj': Float)"), std::string::npos)
      << out[0].message;
  bool origin = false, call = false;
  for (const Note& note : out[0].notes) {
    origin = origin || (note.location.line == 15 && note.message.find("became Half here") != std::string::npos);
    call = call || (note.location.line == 16 && note.message == "called from here");
  }
  EXPECT_TRUE(origin && call);
}

// The precision a script runs in comes from its settings: argparse's
// options, environment variables, a dataclass field set from one. Each is
// analyzed under every value the program names for it (a flag's two, the
// keys of the dict it picks a dtype from): a bug that needs a value the
// default does not have is found, with a note naming the value.
TEST_F(PythonProgram, SettingsAreAnalyzedPerValue) {
  const std::string script = R"(import argparse
import os
from dataclasses import dataclass

import torch


@dataclass
class Config:
    lr: float = 1e-3
    precision: str = os.environ.get("PRECISION", "PRECISION_DEFAULT")


def build(cfg, args):
    dtype = {"fp16": torch.float16, "fp32": torch.float32}[cfg.precision]
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    if args.half_weights:
        model.to(dtype)
    return model


parser = argparse.ArgumentParser()
parser.add_argument("--half-weights", action="store_true", default=HALF_DEFAULT)
args = parser.parse_args()
cfg = Config()
model = build(cfg, args)
opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
scaler = torch.cuda.amp.GradScaler()
for batch in range(10):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(4, 8)).float().mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
)";
  auto variant = [&](const std::string& precision, const std::string& half) {
    const std::string text =
        withPlaceholder(withPlaceholder(script, "PRECISION_DEFAULT", precision), "HALF_DEFAULT", half);
    return findings({write("train.py", text)});
  };
  auto unscaleWithNotes = [&](const std::string& precision, const std::string& half) {
    const auto out = variant(precision, half);
    const Finding* unscale = withRule(out, "DL202");
    EXPECT_EQ(out.size(), 1u);
    if (!unscale) return std::vector<std::string>{"no DL202"};
    EXPECT_EQ(unscale->location.line, 33u);
    std::vector<std::string> assumptions;
    for (const Note& note : unscale->notes)
      if (note.message.rfind("assuming", 0) == 0)
        assumptions.push_back(fmt::format("{}: {}", note.location.line, note.message));
    std::sort(assumptions.begin(), assumptions.end());
    return assumptions;
  };
  // Whatever the defaults, the finding needs both values, and says so.
  const std::vector<std::string> needs = {"11: assuming $PRECISION is \"fp16\"", "23: assuming --half-weights is True"};
  for (const auto& [precision, half] :
       {std::pair{"fp16", "True"}, {"fp32", "True"}, {"fp16", "False"}, {"fp32", "False"}})
    EXPECT_EQ(unscaleWithNotes(precision, half), needs) << precision << ", " << half;
}

// A scaler, an optimizer and a model that live in a trainer class in one
// file, driven from another file that imports it.
TEST_F(PythonProgram, ImportsAndClassMembersAreFollowed) {
  write("lib/trainer.py", R"(import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4, eps=1e-6)
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, batch):
        with torch.autocast("cuda"):
            loss = self.model(batch).float().mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.unscale_(self.opt)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.update()
)");
  const std::string main = write("lib/main.py", R"(import torch
from trainer import Trainer

trainer = Trainer(torch.nn.Linear(4, 4))
trainer.step(torch.randn(2, 4))
)");
  const auto out = findings({main});
  const Finding* late = withRule(out, "DL206");
  ASSERT_TRUE(late);
  EXPECT_EQ(late->location.file, (dir_ / "lib/trainer.py").string());
  EXPECT_EQ(late->location.line, 15u);
  EXPECT_EQ(out.size(), 1u);
}

// Library calls the front end does not model make values unknown, never findings.
TEST_F(PythonProgram, UnknownLibrariesGiveNothing) {
  const std::string file = write("train.py", R"(import torch
import accelerate
import deepspeed

engine = deepspeed.initialize(model=torch.nn.Linear(4, 4))[0]
accelerator = accelerate.Accelerator(mixed_precision="fp16")
model, opt = accelerator.prepare(torch.nn.Linear(4, 4), None)
for batch in range(3):
    loss = model(torch.randn(2, 4).half()).mean()
    accelerator.backward(loss)
    opt.step()
    engine.backward(loss)
    engine.step()
)");
  EXPECT_TRUE(findings({file}).empty());
}

// Where the dtypes are not what the code shows, nothing is reported: an
// autocast(enabled=False) island inside a region, adapters a helper swaps in
// (LoRA on a Half base: the trainable parameters are Float), a region that
// is a nullcontext() on some settings.
TEST_F(PythonProgram, NothingWhereTheDtypesAreNotKnown) {
  write("lora.py", R"(import torch


class LoRALinear(torch.nn.Module):
    def __init__(self, base, r):
        super().__init__()
        self.base = base
        self.a = torch.nn.Linear(base.in_features, r, bias=False)

    def forward(self, x):
        return self.base(x) + self.a(x.float()).sum()


def inject_lora(model, r=8):
    for name, child in list(model.named_children()):
        setattr(model, name, LoRALinear(child, r))
    return model
)");
  const std::string train = write("train.py", R"(import contextlib

import torch
from lora import inject_lora

model = torch.nn.Sequential(torch.nn.Linear(8, 8)).half()
model = inject_lora(model)
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
amp = torch.autocast("cuda", dtype=torch.float16) if torch.cuda.is_available() else contextlib.nullcontext()
q, k = torch.randn(4, 8), torch.randn(4, 8)
with amp:
    with torch.autocast(device_type="cuda", enabled=False):
        scores = torch.matmul(q.float(), k.float().t())
    loss = scores.float().mean()
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
)");
  const auto out = findings({train});
  EXPECT_TRUE(out.empty()) << out.front().rule->id << " " << out.front().message;
}

// `.to(x.dtype)` of an x whose dtype is not known: the result's is not
// either (a cast back to the model's dtype, not a Float tensor), while
// `.to(device)` keeps the dtype.
TEST_F(PythonProgram, ACastToADtypeNotKnownHereIsNotKnown) {
  const std::string program = R"(import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wo = torch.nn.Linear(8, 8, bias=False)

    def forward(self, x, device):
        y = torch.randn(8, 8).float().to(x.dtype)
        z = torch.randn(8, 8).float().to(device)
        return self.wo(y), self.wo(z)


head = Head().to(dtype=torch.bfloat16)
print(head(torch.load("x.pt"), "cpu"))
)";
  EXPECT_EQ(only(findings({write("head.py", program)})), "DL101:12");
}

// model.half() converts the layers with parameters; ReLU and pooling pass
// the Half activations on: the loss on the output is computed in Half.
TEST_F(PythonProgram, AConvertedModelsOutputKeepsItsDtypeThroughParameterFreeLayers) {
  const std::string file = write("train.py", R"(import torch
import torch.nn.functional as F

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(8, 4))
model.half()
logits = model(torch.randn(2, 8).half())
loss = F.cross_entropy(logits, torch.zeros(2).long())
)");
  const auto out = findings({file});
  EXPECT_EQ(only(out), "DL105:7");
}

// A helper that is right by itself, called where its unscale comes a second
// time: the call is what is out of order, and the finding names the helper.
TEST_F(PythonProgram, AProtocolFindingOfAHelperIsReportedAtItsCall) {
  const std::string file = write("train.py", R"(import torch


def log_grad_norm(scaler, optimizer, params):
    scaler.unscale_(optimizer)
    return sum(p.grad.norm() for p in params)


model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda"):
    loss = model(torch.randn(2, 4)).float().mean()
scaler.scale(loss).backward()
scaler.unscale_(optimizer)
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
print(log_grad_norm(scaler, optimizer, model.parameters()))
scaler.step(optimizer)
scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL201:17");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes[0].location.line, 5u);
  EXPECT_EQ(out[0].notes[0].message, "in 'log_grad_norm' here");
}

// Where training code hands values through idioms the interpreter must run:
// a batch of unknown dtype into a layer, calls inside comprehensions and
// f-strings, a generator, a library's vision model converted in place, an
// in-place op into a Float buffer, a property.
TEST_F(PythonProgram, RealCodesIdiomsAreFollowed) {
  const std::string file = write("train.py", R"(import timm
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.cuda.amp.GradScaler()

    @property
    def head(self):
        return self.model

    def train_step(self, images):
        with torch.autocast("cuda"):
            loss = F.softplus(self.head(images)).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()


def batches(loader):
    while True:
        for batch in loader:
            yield batch


model = timm.create_model("resnet50")
model.half()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
stream = batches([])
losses = [trainer.train_step(x) for x in range(3)]
print(f"{len(losses)} steps")
probs = F.softmax(model(next(stream)), dim=-1)
buffer = torch.zeros(8, 8)
buffer.addmm_(probs, probs.t())
)");
  const auto out = findings({file});
  std::vector<std::string> got;
  for (const Finding& f : out) got.push_back(fmt::format("{}:{}", f.rule->id, f.location.line));
  std::sort(got.begin(), got.end());
  // DL202: the scaler unscales the Half parameters timm's model was converted
  // to; DL105: the Half logits outside autocast; DL102: addmm_ of Half
  // matrices into a Float buffer. No DL106: softplus runs in Float under autocast.
  EXPECT_EQ(got, (std::vector<std::string>{"DL102:38", "DL105:36", "DL202:19"}));
}

// accelerate's clip_grad_norm_ unscales every prepared optimizer, by a loop
// over the list prepare() appended to: each item once, so the one optimizer
// in it is not unscaled twice; an unscale after that loop is a second one.
TEST_F(PythonProgram, ALoopOverAKnownListRunsOncePerItem) {
  const std::string program = R"(import torch

class Accelerator:
    def __init__(self):
        self.scaler = torch.amp.GradScaler("cuda")
        self._optimizers = []

    def prepare(self, optimizer):
        self._optimizers.append(optimizer)
        return optimizer

    def clip_grad_norm_(self, parameters):
        for opt in self._optimizers:
            self.scaler.unscale_(opt)
        return torch.nn.utils.clip_grad_norm_(parameters, 1.0)

accelerator = Accelerator()
model = torch.nn.Linear(4, 4)
optimizer = accelerator.prepare(torch.optim.SGD(model.parameters(), lr=0.1))
for step in range(10):
    with torch.autocast("cuda"):
        loss = model(torch.randn(2, 4)).sum()
    accelerator.scaler.scale(loss).backward()
    accelerator.clip_grad_norm_(model.parameters())
    accelerator.scaler.step(optimizer)
    accelerator.scaler.update()
)";
  EXPECT_EQ(only(findings({write("clean.py", program)})), "0 findings");
  std::string twice = program;
  twice.replace(twice.find("    accelerator.scaler.step(optimizer)"), 0,
                "    accelerator.scaler.unscale_(optimizer)\n");
  EXPECT_EQ(only(findings({write("twice.py", twice)})), "DL201:25");
}

// range(n) with n known and small runs n times: one discriminator step per
// generator step (`--d_steps 1`) steps once before the update. A count that
// is a setting is also analyzed at 2, where an unscale inside the
// accumulation loop is a second one.
TEST_F(PythonProgram, ARangeOfAKnownCountRunsThatManyTimes) {
  const std::string gan = R"(import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--d_steps", type=int, default=1)
opt = parser.parse_args()
netD, netG = torch.nn.Linear(4, 1), torch.nn.Linear(4, 4)
optimizerD = torch.optim.Adam(netD.parameters())
optimizerG = torch.optim.Adam(netG.parameters())
scaler = torch.amp.GradScaler("cuda")
for i in range(100):
    for _ in range(opt.d_steps):
        with torch.autocast("cuda"):
            errD = netD(netG(torch.randn(2, 4)).detach()).float().mean()
        scaler.scale(errD).backward()
        scaler.step(optimizerD)
        if opt.d_steps > 1:
            scaler.update()
    with torch.autocast("cuda"):
        errG = -netD(netG(torch.randn(2, 4))).float().mean()
    scaler.scale(errG).backward()
    scaler.step(optimizerG)
    scaler.update()
)";
  EXPECT_EQ(only(findings({write("gan.py", gan)})), "0 findings");
  const std::string accumulation = R"(import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--accum", type=int, default=1)
args = parser.parse_args()
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for step in range(100):
    for micro in range(args.accum):
        with torch.autocast("cuda"):
            loss = model(torch.randn(2, 4)).float().mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
)";
  EXPECT_EQ(only(findings({write("accumulation.py", accumulation)})), "DL201:16");
}

// Settings in a config file the program loads (json.load, yaml.safe_load,
// tomllib.load of open(path), the path relative to the script or above it): each key read
// is a setting whose default is the file's value, analyzed for its other
// values too; a key the file lacks is a setting of unknown default.
TEST_F(PythonProgram, ConfigFileKeysAreSettings) {
  write("conf/small.json", R"({"fp16": true, "lr": 5e-4})");
  write("conf/kd.yaml", "precision: fp16  # fp32 | fp16 | bf16\nepochs: 120\nnested:\n  a: 1\n");
  const std::string json = write("train_json.py", R"(import json

import torch

with open("conf/small.json") as f:
    cfg = json.load(f)
model = torch.nn.Linear(4, 4)
if cfg["fp16"]:
    model.half()
optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.get("lr", 1e-3))
)");
  const auto out = findings({json});
  ASSERT_EQ(only(out), "DL304:10");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().message, "assuming fp16 in conf/small.json is True");
  const std::string yaml = write("train_yaml.py", R"(import yaml

import torch

PRECISION = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
with open("conf/kd.yaml") as f:
    cfg = yaml.safe_load(f)
model = torch.nn.Linear(4, 4).to(PRECISION[cfg["precision"]])
x = torch.randn(2, 4)
y = model(x)
)");
  EXPECT_EQ(only(findings({yaml})), "DL101:10");
  write("conf/run.toml", "[amp]\nprecision = \"fp16\"  # or \"fp32\"\n\n[optim]\nlr = 1e-3\nsteps = 10\n");
  const std::string toml = write("train_toml.py", R"(import tomllib

import torch

with open("conf/run.toml", "rb") as f:
    cfg = tomllib.load(f)
model = torch.nn.Linear(4, 4)
if cfg["amp"]["precision"] == "fp16":
    model.half()
y = model(torch.randn(2, 4))
)");
  const auto fromToml = findings({toml});
  ASSERT_EQ(only(fromToml), "DL101:10");
  EXPECT_EQ(fromToml[0].notes.back().message, "assuming amp.precision in conf/run.toml is \"fp16\"");
}

// An INI file read with configparser: `cfg.getboolean("model", "half")`,
// `cfg["optim"].getfloat("eps", fallback=1e-8)` are its settings, case-insensitive keys.
TEST_F(PythonProgram, IniKeysReadWithConfigparserAreSettings) {
  write("conf/kws.ini", "[model]\nHalf = yes\n\n[optim]\nlr = 1e-3\n");
  const std::string file = write("train.py", R"(import configparser

import torch

cfg = configparser.ConfigParser()
cfg.read("conf/kws.ini")
model = torch.nn.Linear(4, 4)
if cfg.getboolean("model", "half", fallback=False):
    model.half()
optimizer = torch.optim.Adam(model.parameters(), lr=cfg.getfloat("optim", "lr"),
                             eps=cfg["optim"].getfloat("eps", fallback=1e-8))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL304:10");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().message, "assuming model.half in conf/kws.ini is \"yes\"");
}

// ConfigParser.read returns the files it read, so a program that raises when
// it read none still goes on with the file's settings.
TEST_F(PythonProgram, AConfigFileCheckedForBeingReadIsFollowed) {
  write("train.ini", "[run]\nprecision = half\n");
  const std::string file = write("train.py", R"(import configparser

import torch


def read_config(path):
    cp = configparser.ConfigParser()
    if not cp.read(path):
        raise FileNotFoundError(path)
    return cp.get("run", "precision", fallback="float")


precision = read_config("train.ini")
model = torch.nn.Linear(4, 4)
if precision == "half":
    model.half()
y = model(torch.randn(2, 4))
)");
  EXPECT_EQ(only(findings({file})), "DL101:17");
}

// A config class built by its classmethods: from the environment field by
// field (setattr with a name known at run time), or from a file's dict
// spread into the constructor. Each field is then a setting.
TEST_F(PythonProgram, ConfigClassmethodsMakeFieldsSettings) {
  const std::string fromEnvironment = write("env_config.py", R"(import os
from dataclasses import dataclass, fields

import torch


@dataclass
class Config:
    precision: str = "half"
    lr: float = 1e-3

    @classmethod
    def from_env(cls):
        cfg = cls()
        for f in fields(cls):
            raw = os.environ.get("APP_" + f.name.upper())
            if raw is not None:
                setattr(cfg, f.name, type(getattr(cfg, f.name))(raw))
        return cfg


cfg = Config.from_env()
dtype = torch.float16 if cfg.precision == "half" else torch.float32
model = torch.nn.Linear(4, 4).to(dtype=dtype)
optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
)");
  const auto env = findings({fromEnvironment});
  ASSERT_EQ(only(env), "DL304:25");
  EXPECT_EQ(env[0].notes.back().message, "assuming Config.precision is \"half\"");

  write("conf/run.json", R"({"fp16": true, "steps": 10})");
  const std::string fromFile = write("file_config.py", R"(import json
from dataclasses import dataclass, fields

import torch


@dataclass
class Args:
    fp16: bool = False
    steps: int = 100

    @classmethod
    def from_json_file(cls, path):
        with open(path) as f:
            data = json.load(f)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


args = Args.from_json_file("conf/run.json")
model = torch.nn.Linear(4, 4)
if args.fp16:
    model.half()
y = model(torch.randn(2, 4))
)");
  const auto file = findings({fromFile});
  ASSERT_EQ(only(file), "DL101:24");
  EXPECT_EQ(file[0].notes.back().message, "assuming fp16 in conf/run.json is True");
}

// module.to(dtype) casts the module's own nn.Parameters and buffers too.
TEST_F(PythonProgram, ModuleConversionCastsItsOwnParameters) {
  const std::string program = write("train.py", R"(import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.register_buffer("scale", torch.ones(dim))
        self.steps = torch.zeros(1)

    def forward(self, x):
        y = x * self.weight * self.scale
        return y.pow(2).mean(-1)


norm = RMSNorm(8).to(torch.float16)
x = torch.randn(2, 8)
with torch.no_grad():
    out = torch.mm(norm.weight[None], norm.steps[None].t())
r = norm(x.half())
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL101:20,DL105:14");
}

// A protocol finding in a helper moves to the helper's call only when its
// earlier events happened outside the helper and everything it called.
TEST_F(PythonProgram, AFindingStaysInsideAHelperWhoseCalleeScaled) {
  const std::string program = write("train.py", R"(import torch


class Accelerator:
    def __init__(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def backward(self, loss):
        self.scaler.scale(loss).backward()


def main():
    model = torch.nn.Linear(4, 4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accelerator = Accelerator()
    for _ in range(3):
        with torch.autocast("cuda"):
            loss = model(torch.randn(2, 4, device="cuda")).float().sum()
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()


main()
)");
  EXPECT_EQ(only(findings({program})), "DL208:20");
}

// Parameter groups filled by `(no_decay if ... else decay).append(p)`: both
// lists hold the model's parameters. DL304 is at the optimizer's
// construction, the eps given on another line a note.
TEST_F(PythonProgram, GroupsFilledThroughAConditionalListAreTheModels) {
  const std::string program = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).half()
decay, no_decay = [], []
for n, p in model.named_parameters():
    (no_decay if p.ndim == 1 else decay).append(p)
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                               {"params": no_decay, "weight_decay": 0.0}],
                              lr=1e-3, eps=1e-8)
)");
  const auto out = findings({program});
  ASSERT_EQ(only(out), "DL304:7");
  EXPECT_EQ(out[0].notes.back().message, "eps given here");
  EXPECT_EQ(out[0].notes.back().location.line, 9u);
}

// Blocks made by a generator into a ModuleList are followed into their
// forward; a custom backward multiplies a torch.cat of Float weights.
TEST_F(PythonProgram, BlocksFromAGeneratorAndConcatenatedOperandsAreFollowed) {
  const std::string program = write("train.py", R"(import torch
import torch.nn as nn


class GatedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w_gate, w_up):
        gate = x @ w_gate.t()
        up = x @ w_up.t()
        ctx.save_for_backward(x, w_gate, w_up)
        return gate * up

    @staticmethod
    def backward(ctx, grad_out):
        x, w_gate, w_up = ctx.saved_tensors
        both = torch.cat([grad_out, grad_out], dim=-1)
        dx = both @ torch.cat([w_gate, w_up], dim=0)
        return dx, None, None


class Gated(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w_gate = nn.Parameter(torch.randn(dim, dim))
        self.w_up = nn.Parameter(torch.randn(dim, dim))

    def forward(self, x):
        return GatedFunction.apply(x, self.w_gate, self.w_up)


blocks = nn.ModuleList(Gated(8) for _ in range(2)).cuda()
h = torch.randn(4, 8, device="cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    for block in blocks:
        h = block(h)
h.float().sum().backward()
)");
  EXPECT_EQ(only(findings({program})), "DL103:17");
}

// A section of a YAML file (`conf["train"]["amp"]`) is a setting too; a
// hand-written guard's __enter__ and __exit__ run around the `with` body.
TEST_F(PythonProgram, NestedConfigKeysAndGuardClassesAreFollowed) {
  write("conf.yaml", "model:\n  dim: 8\ntrain:\n  amp: true   # mixed precision\n  clip: 1.0\n");
  const std::string program = write("train.py", R"(import torch
import yaml


class AutocastGuard:
    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        torch.set_autocast_dtype("cuda", self.dtype)
        torch.set_autocast_enabled("cuda", True)
        return self

    def __exit__(self, exc_type, exc, tb):
        torch.set_autocast_enabled("cuda", False)
        return False


with open("conf.yaml") as f:
    conf = yaml.safe_load(f)
model = torch.nn.Linear(conf["model"]["dim"], 2).cuda()
head = torch.nn.Linear(2, 2).cuda()
callbacks = list([head]) if conf["train"]["amp"] else []
with AutocastGuard(torch.float16):
    h = model(torch.randn(4, 8, device="cuda"))
out = callbacks[0](h)
)");
  const auto out = findings({program});
  ASSERT_EQ(only(out), "DL101:26");
  EXPECT_EQ(out[0].notes.back().message, "assuming train.amp in conf.yaml is True");
}

// A detectron2-style config: defaults merged section by section with a YAML
// file (setdefault(...).update(...)), wrapped recursively into a dict
// subclass read by attribute. The file's values decide; the gain of 64 is a
// static loss scale inside the scaler's.
TEST_F(PythonProgram, AnAttributeConfigMergedWithAYamlFileIsFollowed) {
  write("run.yaml", "MODEL:\n  HALF: true   # fits the batch\nSOLVER:\n  LOSS_GAIN: 64.0\n");
  const std::string program = write("train.py", R"(import copy
import torch
import yaml

_DEFAULTS = {"MODEL": {"HALF": False, "DIM": 8}, "SOLVER": {"LOSS_GAIN": 1.0}}


class CfgNode(dict):
    __getattr__ = dict.__getitem__

    @classmethod
    def wrap(cls, d):
        return cls({k: cls.wrap(v) if isinstance(v, dict) else v for k, v in d.items()})


def get_cfg(path="run.yaml"):
    cfg = copy.deepcopy(_DEFAULTS)
    with open(path) as f:
        for section, values in yaml.safe_load(f).items():
            cfg.setdefault(section, {}).update(values)
    return CfgNode.wrap(cfg)


cfg = get_cfg()
model = torch.nn.Linear(cfg.MODEL.DIM, 2).cuda()
if cfg.MODEL.HALF:
    model.half()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(torch.randn(4, 8, device="cuda")).sum()
gain = cfg.SOLVER.LOSS_GAIN
scaler.scale(loss * gain).backward()
scaler.step(opt)
scaler.update()
)");
  const auto out = findings({program});
  ASSERT_EQ(ruleLines(out), "DL202:34,DL203:33");
  const Finding* half = withRule(out, "DL202");
  EXPECT_EQ(half->notes.back().message, "assuming MODEL.HALF in run.yaml is True");
  EXPECT_NE(withRule(out, "DL203")->message.find("'gain' (64)"), std::string::npos);

  // The file's unit gain is no scale (the flag is analyzed both ways, as any flag).
  write("run.yaml", "MODEL:\n  HALF: false\nSOLVER:\n  LOSS_GAIN: 1.0\n");
  EXPECT_EQ(ruleLines(findings({program})), "DL202:34");
}

// A YAML file wrapped recursively into an attribute dict, the recursion reaching the leaves
// (to_ns(v) on every value): the file's setting still chooses the parameters' dtype through a map.
TEST_F(PythonProgram, AFileWrappedByARecursionToItsLeavesKeepsItsSettings) {
  write("c.yaml", "precision:\n  param_dtype: half\n");
  const std::string program = write("train.py", R"(import torch
import yaml

PARAM_DTYPES = {"half": torch.float16, "float": torch.float32}


class Namespace(dict):
    __getattr__ = dict.__getitem__


def to_ns(obj):
    if isinstance(obj, dict):
        return Namespace({k: to_ns(v) for k, v in obj.items()})
    return obj


with open("c.yaml") as f:
    cfg = to_ns(yaml.safe_load(f))
model = torch.nn.Linear(4, 4).to(PARAM_DTYPES[cfg.precision.param_dtype])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
scaler.scale(model.weight.float().sum()).backward()
scaler.unscale_(opt)
)");
  const auto out = findings({program});
  ASSERT_EQ(ruleLines(out), "DL202:23");
  EXPECT_EQ(out[0].notes.back().message, "assuming precision.param_dtype in c.yaml is \"half\"");
}

// The config file found where the program computes its path from `__file__` (os.path and pathlib), wrapped
// into a SimpleNamespace: its setting chooses the dtype; a key the program sets from argv is read as set
// (`--precision fp32` stores "fp32" over the file's "half": no finding under it).
TEST_F(PythonProgram, AConfigFileFoundThroughItsPathFromTheScriptKeepsItsSettings) {
  write("conf/run.yaml", "train:\n  precision: half\n  eps: 1.0e-8\n");
  write("pkg/config.py", R"(import argparse
import os
from pathlib import Path
from types import SimpleNamespace

import yaml

DEFAULT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conf", "run.yaml")
SAME = Path(__file__).resolve().parent.parent / "conf" / "run.yaml"


def get_config():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=DEFAULT)
    ap.add_argument("--precision", choices=("fp32", "half"))
    args = ap.parse_args()
    with open(args.config) as f:
        raw = yaml.safe_load(f)
    if args.precision is not None:
        raw["train"]["precision"] = args.precision
    return SimpleNamespace(**{k: SimpleNamespace(**v) for k, v in raw.items()}), json_free(SAME)


def json_free(path):
    return yaml.safe_load(path.open())
)");
  const std::string program = write("pkg/train.py", R"(import torch

from .config import get_config

cfg, same = get_config()
model = torch.nn.Linear(4, 4)
if cfg.train.precision == "half":
    model = model.half()
opt = torch.optim.Adam(model.parameters(), eps=cfg.train.eps)
if same["train"]["precision"] == "half":
    print("read twice")
)");
  const auto out = findings({program});
  ASSERT_EQ(ruleLines(out), "DL304:9");
  EXPECT_NE(out[0].notes.back().message.find("assuming --precision is None"), std::string::npos)
      << out[0].notes.back().message;
}

// A comprehension whose body calls the step runs as a loop does: the step repeats with no update between.
TEST_F(PythonProgram, AStepInAComprehensionRepeatsAsInALoop) {
  const std::string program = write("train.py", R"(import sys

import torch


class Trainer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 4).cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).float().mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.optimizer.zero_grad()
        return loss.item()

    def fit(self, loader):
        losses = [self.train_step(x) for x in loader]
        self.scaler.update()


Trainer().fit(sys.argv)
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL204:16");
}

// type_as() casts to the other tensor's dtype, and a scaler made disabled says so through is_enabled():
// the BFloat16 L1 loss is backpropagated unscaled, only on the branch that runs.
TEST_F(PythonProgram, ABFloat16LossTypedAsThePredictionIsBackpropagatedOnTheBranchThatRuns) {
  const std::string program = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.Adam(model.parameters())
dtype = torch.bfloat16
scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
x = torch.randn(8, 4, device="cuda")
with torch.autocast("cuda", dtype=dtype):
    pred = model(x)
    loss = (pred - x.type_as(pred)).abs().mean()
if scaler.is_enabled():
    scaler.scale(loss).backward()
else:
    loss.backward()
scaler.step(opt)
scaler.update()
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL106:14");
}

// A class deriving from nn.Linear has the layer's Float weight and bias, and is a module (.cuda() keeps it):
// its custom Function's backward meets the Half gradient with the Float weight.
TEST_F(PythonProgram, ASubclassOfALibraryLayerHasItsParameters) {
  const std::string program = write("train.py", R"(import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        out = F.linear(x, weight, bias)
        ctx.save_for_backward(x.to(out.dtype), weight)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_out.matmul(weight)
        return grad_x, grad_out.t().matmul(x), None


class MemoryEfficientLinear(nn.Linear):
    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


layer = MemoryEfficientLinear(4, 4).cuda()
with torch.autocast("cuda", dtype=torch.float16):
    y = layer(torch.randn(2, 4, device="cuda"))
y.float().sum().backward()
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL103:16");
}

// `amp_dtype or torch.float32` is the dtype (a dtype is truthy); torch.cdist runs in Float under autocast, and a
// cast of its result to Half stays the cast's rounded values through a scalar division: a lossy round trip.
TEST_F(PythonProgram, ADistanceCastToHalfThenScaledBeforeCrossEntropyIsARoundTrip) {
  const std::string program = write("train.py", R"(import torch
import torch.nn.functional as F

AMP_DTYPE = torch.float16
encoder = torch.nn.Linear(4, 4).cuda()
labels = torch.randint(0, 4, (2,))
with torch.autocast("cuda", dtype=AMP_DTYPE or torch.float32):
    z = encoder(torch.randn(2, 4))
    distances = torch.cdist(z, z).pow(2)
    logits = -distances.to(AMP_DTYPE) / 0.5
    loss = F.cross_entropy(logits, labels)
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL104:10");
}

// dict(DEFAULTS, key=value) is the defaults with that key set: the override decides.
TEST_F(PythonProgram, ADictOfDefaultsWithAKeywordOverrideKeepsBoth) {
  const std::string program = write("train.py", R"(import torch

DEFAULTS = dict(param_dtype="fp32", lr=0.1)
hp = dict(DEFAULTS, param_dtype="fp16")
model = torch.nn.Linear(4, 4)
if hp["param_dtype"] == "fp16":
    model = model.half()
opt = torch.optim.SGD(model.parameters(), lr=hp["lr"])
scaler = torch.amp.GradScaler("cuda")
scaler.scale(model.weight.float().sum()).backward()
scaler.step(opt)
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL202:11");
}

// `(pred - y) ** 2` keeps pred's dtype: a Half squared error is a Half loss.
TEST_F(PythonProgram, APowerOfATensorKeepsItsDtype) {
  const std::string program = write("train.py", R"(import torch

model = torch.nn.Linear(4, 1).cuda().half()
x = torch.randn(8, 4, device="cuda").half()
y = torch.randn(8, 1, device="cuda").half()
loss = ((model(x) - y) ** 2).sum() / 8
loss.backward()
)");
  EXPECT_EQ(ruleLines(findings({program})), "DL105:6,DL106:7");
}

// Under the cap on configurations, a setting named for the precision it
// chooses (--fp16) is analyzed before flags tested earlier.
TEST_F(PythonProgram, SettingsNamedForPrecisionAreAnalyzedFirst) {
  const std::string program = write("train.py", R"(import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--verbose", action="store_true")
p.add_argument("--shuffle", action="store_true")
p.add_argument("--pin-memory", action="store_true")
p.add_argument("--compile", action="store_true")
p.add_argument("--profile", action="store_true")
p.add_argument("--fp16", action="store_true")
args = p.parse_args()
print(1 if args.verbose else 0, 1 if args.shuffle else 0, 1 if args.pin_memory else 0)
print(1 if args.compile else 0, 1 if args.profile else 0)
model = torch.nn.Linear(4, 4)
if args.fp16:
    model.half()
y = model(torch.randn(2, 4))
)");
  EXPECT_EQ(only(findings({program})), "DL101:18");
}

// Lightning's --precision values tested by suffix (`precision.endswith("-mixed")`
// makes the scaler): "bf16-true" has none. A setting tested for truth that
// defaults to None (--gradient_clip_val) is analyzed given too, or a number
// at zero and not.
TEST_F(PythonProgram, SuffixTestsAndTruthTestedSettings) {
  const std::string program = write("train.py", R"(import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16-true", choices=["16-mixed", "bf16-true"])
parser.add_argument("--gradient_clip_val", type=float, default=None)
args = parser.parse_args()
model = torch.nn.Linear(4, 1)
if args.precision == "bf16-true":
    model.bfloat16()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda") if args.precision.endswith("-mixed") else None
for step in range(100):
    with torch.autocast("cuda", enabled=scaler is not None):
        loss = model(torch.randn(2, 4).to(next(model.parameters()).dtype)).float().mean()
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        if args.gradient_clip_val:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.gradient_clip_val)
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
)");
  const auto out = findings({program});
  ASSERT_EQ(only(out), "DL201:21");
  std::vector<std::string> notes;
  for (const Note& note : out[0].notes) notes.push_back(note.message);
  EXPECT_NE(std::find(notes.begin(), notes.end(), "assuming --gradient_clip_val is given"), notes.end());
}

// nanoGPT-style configuration: a dict(...) of defaults made into a class
// with type(); its attributes are the dict's values.
TEST_F(PythonProgram, AConfigMadeByTypeOfADict) {
  const std::string program = write("train.py", R"(import torch

config = dict(dtype="float16", batch_size=8)
cfg = type("Cfg", (), config)
ptdtype = {"float32": torch.float32, "float16": torch.float16}[cfg.dtype]
model = torch.nn.Linear(4, 4).to(ptdtype)
y = model(torch.randn(cfg.batch_size, 4))
)");
  EXPECT_EQ(only(findings({program})), "DL101:7");
}

// custom_bwd runs backward in the autocast state forward ran in: the mixed
// matmul there is cast, no DL103; without it, it is. A Function with
// custom_fwd(cast_inputs=torch.float32) beside it gives nothing either.
TEST_F(PythonProgram, CustomFwdAndBwdDecorators) {
  const std::string program = R"(import torch
from torch.amp import custom_bwd, custom_fwd


class LinearFn(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda")
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.t()

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight, grad_out.t() @ x


class ExpFn(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x, scale):
        ctx.save_for_backward(x, scale)
        return torch.softmax(x * scale, dim=-1)

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, grad_out):
        x, scale = ctx.saved_tensors
        return grad_out @ scale, None


w = torch.nn.Parameter(torch.randn(4, 4))
with torch.autocast("cuda", dtype=torch.float16):
    y = LinearFn.apply(torch.randn(2, 4), w)
    z = ExpFn.apply(y, w)
z.float().sum().backward()
)";
  EXPECT_EQ(only(findings({write("decorated.py", program)})), "0 findings");
  const std::string decorator = "    @custom_bwd(device_type=\"cuda\")\n";
  std::string plain = program;
  plain.erase(plain.find(decorator), decorator.size());  // LinearFn's: its backward leaves the region
  const auto out = findings({write("plain.py", plain)});
  ASSERT_EQ(out.size(), 2u);  // grad_out @ weight, grad_out.t() @ x
  for (const Finding& f : out) EXPECT_EQ(fmt::format("{}:{}", f.rule->id, f.location.line), "DL103:15");
}

// GradScaler(enabled=False) does nothing: its step() is the optimizer's, and
// a plain backward() before it is right. A method the trainer calls on
// itself keeps its findings where they happen.
TEST_F(PythonProgram, ADisabledScalerAndTheTrainersOwnMethods) {
  const std::string file = write("train.py", R"(import torch


class Trainer:
    def __init__(self, model, amp):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.cuda.amp.GradScaler(enabled=amp)

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def fit(self, loader):
        for x in loader:
            with torch.autocast("cuda", enabled=self.scaler.is_enabled()):
                loss = self.model(x).float().mean()
            self.scaler.scale(loss).backward()
            self.optimizer_step()


Trainer(torch.nn.Linear(4, 1), amp=False).fit([])
Trainer(torch.nn.Linear(4, 1), amp=True).fit([])
)");
  const auto out = findings({file});
  EXPECT_EQ(only(out), "DL205:11");  // in optimizer_step, not at its call
}

// Float master copies of a Half model's parameters are not its parameters:
// AdamW's default eps is fine on them; on the filtered parameters themselves it is not.
TEST_F(PythonProgram, AComprehensionOfNewTensorsIsNotTheParameters) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).half()
params = [p for p in model.parameters() if p.requires_grad]
master = [p.detach().clone().float() for p in params]
torch.optim.AdamW(master, lr=1e-3)
torch.optim.AdamW(params, lr=1e-3)
)");
  const auto out = findings({file});
  EXPECT_EQ(only(out), "DL304:7");
}

// A Hugging Face model's output: its logits are in the model's dtype outside
// autocast and autocast's inside; a causal LM's are not known (many upcast).
TEST_F(PythonProgram, ALibraryModelsLogitsHaveItsDtype) {
  const std::string file = write("train.py", R"(import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("bert", torch_dtype=torch.float16)
lm = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
for batch in []:
    labels = batch.pop("labels")
    F.cross_entropy(model(**batch).logits, labels)
    F.cross_entropy(model(**batch)[0], labels)
    F.cross_entropy(lm(**batch).logits, labels)
    with torch.autocast("cuda", dtype=torch.float16):
        F.cross_entropy(model(**batch).logits, labels)
)");
  const auto out = findings({file});
  std::vector<unsigned> lines;
  for (const Finding& f : out) {
    EXPECT_EQ(f.rule->id, "DL105");
    lines.push_back(f.location.line);
  }
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<unsigned>{9, 10}));
}

// A number compared with a threshold: its default on one side, a value on
// the other is one the program names (clipping only when --clip-grad > 0).
TEST_F(PythonProgram, AThresholdSettingIsAnalyzedOnBothSides) {
  const std::string file = write("train.py", R"(import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--clip-grad", type=float, default=0.0)
args = parser.parse_args()
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for x in []:
    with torch.autocast("cuda"):
        loss = model(x).float().mean()
    scaler.scale(loss).backward()
    if args.clip_grad > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
    scaler.step(opt)
    scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL205:15");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().message, "assuming --clip-grad is 1");
}

// Parameter groups gathered by hand (Hugging Face's weight-decay split):
// the optimizer still updates the model's Half parameters.
TEST_F(PythonProgram, ParametersGatheredIntoGroupsAreTheModels) {
  const std::string file = write("train.py", R"(import torch


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.ndim <= 1 or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


model = torch.nn.Linear(4, 4).half()
optimizer = torch.optim.AdamW(param_groups(model, 0.01), lr=1e-3)
)");
  EXPECT_EQ(only(findings({file})), "DL304:15");
}

// A @contextmanager that enters autocast before it yields is that region
// for the `with` body: a Half input meets the Float layer inside it safely.
TEST_F(PythonProgram, AContextManagersAutocastCoversTheWithBody) {
  const std::string file = write("train.py", R"(import contextlib
import torch


@contextlib.contextmanager
def amp(enabled):
    with torch.autocast("cuda", dtype=torch.float16, enabled=enabled):
        yield


model = torch.nn.Linear(4, 4)
x = torch.randn(2, 4).half()
with amp(True):
    y = model(x)
z = model(x)
)");
  EXPECT_EQ(only(findings({file})), "DL101:15");
}

// Autocast switched by hand through torch's global setters.
TEST_F(PythonProgram, AutocastSwitchedByHandIsFollowed) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4)
x = torch.randn(2, 4).half()
torch.set_autocast_gpu_dtype(torch.float16)
torch.set_autocast_enabled(True)
y = model(x)
torch.set_autocast_enabled(False)
torch.clear_autocast_cache()
z = model(x)
)");
  EXPECT_EQ(only(findings({file})), "DL101:10");
}

// DL107: autocast switched off by hand without clearing its cache, then an
// optimizer step; clear_autocast_cache() before the step is the fix.
TEST_F(PythonProgram, AnAutocastCacheLeftFullAcrossTheStep) {
  const std::string buggy = R"(import torch

model = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in []:
    torch.set_autocast_enabled(True)
    loss = model(x).float().mean()
    torch.set_autocast_enabled(False)
    loss.backward()
    opt.step()
)";
  const auto out = findings({write("buggy.py", buggy)});
  EXPECT_EQ(only(out), "DL107:8");
  std::string fixed = buggy;
  fixed.replace(fixed.find("    loss.backward()"), 0, "    torch.clear_autocast_cache()\n");
  EXPECT_EQ(only(findings({write("fixed.py", fixed)})), "0 findings");
}

// Autocast switched on for the whole process and never left: the finding is at each step, with a note at
// the line that enabled it.
TEST_F(PythonProgram, AnAutocastEnabledForTheProcessIsStillOnAtTheStep) {
  const std::string program = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.set_autocast_enabled("cuda", True)
for x in []:
    loss = model(x).float().mean()
    loss.backward()
    opt.step()
)");
  const auto out = findings({program});
  ASSERT_EQ(only(out), "DL107:9");
  EXPECT_EQ(out[0].notes.back().message, "autocast enabled here, and still on at the step");
  EXPECT_EQ(out[0].notes.back().location.line, 5u);
}

// A setting tested only on another setting's path (torchvision's reference
// loop: `--clip-grad-norm` defaults to None and is read only where the
// `--amp` scaler exists): the configured runs find it and run again with it.
TEST_F(PythonProgram, ASettingReachedOnlyUnderAnotherIsAnalyzedWithIt) {
  const std::string file = write("train.py", R"(import argparse
import torch

def train_one_epoch(model, optimizer, args, scaler=None):
    for i in range(10):
        loss = model(torch.randn(4, 8)).sum()
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if args.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--clip-grad-norm", default=None, type=float)
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
    train_one_epoch(model, optimizer, args, scaler)

main()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL205:11");
  std::vector<std::string> assumed;
  for (const Note& note : out[0].notes)
    if (note.message.rfind("assuming", 0) == 0) assumed.push_back(note.message);
  EXPECT_EQ(assumed, (std::vector<std::string>{"assuming --amp is True", "assuming --clip-grad-norm is given"}));
}

// Adapters a helper injects over named_modules() (setattr(parent, name,
// LoRALinear(child))) run inside the model: their custom backward is checked
// with the dtypes of the autocast region the model ran under. A dtype
// compared with `is not` is a setting's test like `!=`.
TEST_F(PythonProgram, AnAdapterInjectedOverNamedModulesIsFollowed) {
  write("adapters.py", R"(import torch


class FastLoRA(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a, b):
        xa = x @ a.t()
        ctx.save_for_backward(xa, b)
        return xa @ b.t()

    @staticmethod
    def backward(ctx, grad_out):
        xa, b = ctx.saved_tensors
        d_b = torch.empty_like(b)
        torch.mm(grad_out.t(), xa, out=d_b)
        grad_xa = grad_out @ b
        return grad_xa, None, d_b


class LoRALinear(torch.nn.Module):
    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.a = torch.nn.Parameter(torch.zeros(rank, base.in_features))
        self.b = torch.nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        return self.base(x) + FastLoRA.apply(x, self.a, self.b)


def inject(model, targets, rank=8):
    for _, module in list(model.named_modules()):
        for name, child in list(module.named_children()):
            if name in targets and isinstance(child, torch.nn.Linear):
                setattr(module, name, LoRALinear(child, rank))
)");
  const std::string train = write("train.py", R"(import argparse

import torch
from adapters import inject

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.q_proj(x)


parser = argparse.ArgumentParser()
parser.add_argument("--precision", choices=list(DTYPES), default="bf16")
parser.add_argument("--targets", nargs="+", default=["q_proj"])
args = parser.parse_args()
model = torch.nn.Sequential(Block(), Block())
inject(model, set(args.targets))
amp_dtype = DTYPES[args.precision]
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
for step in range(10):
    with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not torch.float32):
        loss = model(torch.randn(4, 8)).float().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
)");
  const auto out = findings({train});
  EXPECT_EQ(ruleLines(out), "DL102:15,DL103:16");
  for (const Finding& finding : out) EXPECT_NE(finding.message.find("BFloat16"), std::string::npos) << finding.message;
}

// nanoGPT's shapes: a ModuleDict's modules by key (`self.transformer.h`),
// and `q, k, v = qkv.split(n, dim=2)`, pieces of the tensor's dtype.
TEST_F(PythonProgram, AModuleDictsModulesAndASplitsPiecesAreFollowed) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(8, dim=2)
        att = (q.float() @ k.float().transpose(-2, -1)) * 0.5
        return att.softmax(-1) @ v


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(h=nn.ModuleList([Attention() for _ in range(2)]), ln=nn.LayerNorm(8)))

    def forward(self, x):
        for block in self.transformer.h:
            x = block(x)
        return self.transformer["ln"](x)


model = GPT().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for step in range(3):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(2, 4, 8)).float().sum()
    loss.backward()
    optimizer.step()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL104:12");
}

// Float adapters injected into a Half model through a helper that walks a
// dotted name with getattr: outside autocast they receive the model's Half
// activations, and the model keeps its Half parameters (its logits are Half).
TEST_F(PythonProgram, FloatAdaptersInjectedIntoAHalfModelMeetHalfActivations) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base, rank=8):
        super().__init__()
        self.base = base
        self.lora_a = nn.Linear(base.in_features, rank, bias=False)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(x)).to(x.dtype)


def parent_of(model, dotted):
    parts = dotted.split(".")
    module = model
    for part in parts[:-1]:
        module = getattr(module, part)
    return module, parts[-1]


def inject(model, targets):
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and any(name.endswith(t) for t in targets):
            parent, attr = parent_of(model, name)
            setattr(parent, attr, LoRALinear(module))


model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 4)).cuda().half()
inject(model, ["0"])
optimizer = torch.optim.AdamW([p for n, p in model.named_parameters() if "lora_" in n], lr=1e-4)
for step in range(3):
    logits = model(torch.randn(2, 8, device="cuda").half())
    loss = F.cross_entropy(logits, torch.zeros(2, dtype=torch.long, device="cuda"))
    loss.float().backward()
    optimizer.step()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:14,DL105:37");
}

// nn.Sequential(*layers) of lists built in loops (`layers.append(...)`,
// `blocks += [Block() for _ in range(n)]`): the modules one pass adds, in
// order; a list of unknown modules makes the container's output unknown.
TEST_F(PythonProgram, ASequentialOfAListBuiltInALoopRunsItsModules) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Net(nn.Module):
    def __init__(self, sizes, depth, extra):
        super().__init__()
        blocks = [mlp(sizes)]
        blocks += [mlp(sizes) for _ in range(depth)]
        self.body = nn.Sequential(*blocks)
        self.opaque = nn.Sequential(*extra)
        self.head = nn.Linear(sizes[-1], 1)

    def forward(self, x):
        h = self.body(x)
        return self.head(h.float()) + self.head(self.opaque(x).float())


model = Net([8, 8], 2, list(torch.hub.load("repo", "layers"))).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(torch.randn(4, 8)).float().sum()
loss.backward()
optimizer.step()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL104:24");
  EXPECT_NE(out[0].message.find("'h.float()'"), std::string::npos) << out[0].message;
}

// @torch.autocast(..., dtype=AMP_DTYPE) on a method of another module: the
// decorator is evaluated where the method is defined (its module's global),
// and leaving the region records the BFloat16 loss as a with-block does.
TEST_F(PythonProgram, AnAutocastDecoratorOnAMethodIsItsRegion) {
  write("pkg/__init__.py", "");
  write("pkg/trainer.py", R"(import os

import torch

AMP_DTYPE = torch.bfloat16 if os.environ.get("AMP_DTYPE", "bf16") == "bf16" else torch.float16


class Trainer:
    def __init__(self, model):
        self.model = model
        self.scaler = torch.cuda.amp.GradScaler()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.autocast("cuda", dtype=AMP_DTYPE)
    def forward_loss(self, x):
        return self.model(x).float().sum()

    def train_step(self, x):
        loss = self.forward_loss(x)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
)");
  const std::string train = write("train.py", R"(import torch
from pkg.trainer import Trainer

trainer = Trainer(torch.nn.Linear(4, 4).cuda())
for step in range(3):
    trainer.train_step(torch.randn(2, 4))
)");
  const auto out = findings({train});
  // Where the scaler is made, where the fix (enabled= for Half only) goes;
  // the scale() and the step() are notes.
  ASSERT_EQ(only(out), "DL209:11");
  EXPECT_EQ(out[0].notes.front().message, "loss scaled here");
  EXPECT_EQ(out[0].notes.front().location.line, 20u);
  EXPECT_TRUE(std::any_of(out[0].notes.begin(), out[0].notes.end(), [](const Note& note) {
    return note.message == "the scaler unscales and steps with its gradients here" && note.location.line == 21;
  }));
  EXPECT_EQ(out[0].notes.back().message, "assuming $AMP_DTYPE is \"bf16\"");
}

// A scaler stepping an optimizer whose module is frozen (requires_grad_(False)
// on a setting's path): PyTorch raises "No inf checks were recorded for this
// optimizer." (DL207), reported in the helper that steps it. Unfrozen per
// parameter on another path: nothing.
TEST_F(PythonProgram, AScalerSteppingAFrozenModulesOptimizer) {
  const std::string file = write("train.py", R"(import argparse

import torch


def step_all(scaler, optimizers):
    for optimizer in optimizers:
        scaler.step(optimizer)
    scaler.update()


parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["probe", "full"], default="probe")
args = parser.parse_args()
body, head = torch.nn.Linear(8, 8).cuda(), torch.nn.Linear(8, 1).cuda()
if args.mode == "probe":
    body.requires_grad_(False)
for p in head.parameters():
    p.requires_grad = True
body_opt = torch.optim.SGD(body.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
for step in range(3):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = head(body(torch.randn(4, 8))).float().mean()
    scaler.scale(loss).backward()
    step_all(scaler, [body_opt, head_opt])
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL207:8");
  EXPECT_NE(out[0].message.find("'body_opt'"), std::string::npos) << out[0].message;
  EXPECT_EQ(out[0].notes.back().message, "assuming --mode is \"probe\"");
}

// A registry filled by a decorator (`@register("tiny")` whose closure stores
// `MODELS[name] = fn`) and looked up by a config's key builds that model;
// `dict(DEFAULTS)` is a copy of that dict.
TEST_F(PythonProgram, AModelFromARegistryADecoratorFills) {
  write("zoo/__init__.py", "");
  write("zoo/registry.py", R"(MODELS = {}


def register(name):
    def deco(fn):
        MODELS[name] = fn
        return fn
    return deco
)");
  write("zoo/models.py", R"(import torch

from .registry import register


@register("tiny")
def tiny(width):
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.Linear(width, 1))
)");
  const std::string train = write("train.py", R"(import argparse

import torch

import zoo.models
from zoo.registry import MODELS

DEFAULTS = {"model": "tiny", "half": False}
parser = argparse.ArgumentParser()
parser.add_argument("--model", default="tiny")
parser.add_argument("--half", action="store_true")
args = parser.parse_args()
cfg = dict(DEFAULTS)
model = MODELS[cfg["model"]](8).cuda()
if args.half:
    model.half()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
)");
  const auto out = findings({train});
  ASSERT_EQ(only(out), "DL304:17");
  EXPECT_EQ(out[0].notes.back().message, "assuming --half is True");
}

// Float nn.Parameter adapters injected into a Half base are parameters of the
// model too: an optimizer over its trainable parameters is not over Half ones
// (no DL304, no DL202).
TEST_F(PythonProgram, FloatParameterAdaptersInAHalfModelAreNotHalfParameters) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base, rank=4):
        super().__init__()
        self.base = base
        self.lora_a = nn.Parameter(torch.zeros(rank, 8))
        self.lora_b = nn.Parameter(torch.zeros(8, rank))

    def forward(self, x):
        return self.base(x) + (x.float() @ self.lora_a.t() @ self.lora_b.t()).to(x.dtype)


model = nn.Sequential(nn.Linear(8, 8)).cuda().half()
model[0] = LoRALinear(model[0])
for name, p in model.named_parameters():
    p.requires_grad_("lora_" in name)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
scaler = torch.cuda.amp.GradScaler()
for step in range(3):
    loss = model(torch.randn(2, 8, device="cuda").half()).float().sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
)");
  const auto out = findings({file});
  EXPECT_TRUE(out.empty()) << out.front().rule->id << " " << out.front().message;
}

// TrainConfig(**vars(args)): the dataclass gets each parsed argument, a
// setting still; a scaler enabled for every precision but fp32 meets bf16.
TEST_F(PythonProgram, ADataclassFilledFromVarsOfTheParsedArguments) {
  const std::string file = write("train.py", R"(import argparse
from dataclasses import dataclass

import torch

AMP = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}


@dataclass
class TrainConfig:
    lr: float
    precision: str


p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.1)
p.add_argument("--precision", choices=sorted(AMP), default="bf16")
cfg = TrainConfig(**vars(p.parse_args()))
model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
scaler = torch.cuda.amp.GradScaler(enabled=cfg.precision != "fp32")
with torch.autocast("cuda", dtype=AMP[cfg.precision], enabled=cfg.precision != "fp32"):
    loss = model(torch.randn(2, 4, device="cuda")).sum()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL209:21");
  EXPECT_EQ(out[0].notes.back().message, "assuming --precision is \"bf16\"");
}

// A `return` inside a `with torch.autocast(...)` leaves the region: the
// caller computes outside autocast again.
TEST_F(PythonProgram, AReturnInsideAnAutocastRegionLeavesIt) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()


def forward(x):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(x)


h = torch.randn(4, 4, dtype=torch.float16)
y = forward(h)
torch.softmax(h, 1)
)");
  EXPECT_EQ(only(findings({file})), "DL105:13");
}

// One `with torch.autocast(...)` around the whole loop keeps the region on
// across the step: the next forward uses the cached Half copies of the old
// weights (DL107 at the step). The region closed before the step clears them,
// and a step that no forward in its region follows leaves them unused.
TEST_F(PythonProgram, AStepInsideAnAutocastRegionUsesStaleWeights) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()


@torch.autocast("cuda", dtype=torch.float16)
def whole_epoch(loader):
    for x in loader:
        loss = model(x).float().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()


def epoch(loader):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).float().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()


def one_step(x):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL107:13");
  EXPECT_EQ(out[0].notes[1].message, "a forward in the region uses them here");
  EXPECT_NE(out[0].message.find("end the region before the step"), std::string::npos) << out[0].message;
  EXPECT_EQ(out[0].notes.front().location.line, 11u);  // the weights cast and cached
}

// A loss computed in Half is DL106 also where scaler.scale(loss) multiplies it
// by the Float scale before backward(): RULES.md's "loss itself computed in low
// precision", and the C++ analyzer's reading.
TEST_F(PythonProgram, AScaledHalfLossIsStillAHalfLoss) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
x = torch.randn(2, 4, device="cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(x).mean()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(x).mean()
loss.backward()
opt.step()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL106:14,DL106:9");
}

// One bug under two values of a setting: a Half teacher called with a Float
// input raises at the call where it is an nn.Sequential, inside its forward
// where it is a class of the program's. One finding, at the call.
TEST_F(PythonProgram, OneBugSeenAtTwoPlacesUnderTwoValuesIsOneFinding) {
  const std::string file = write("train.py", R"(import argparse

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def mlp():
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU())


TEACHERS = {"mlp": mlp, "net": Net}
p = argparse.ArgumentParser()
p.add_argument("--teacher", default="mlp", choices=sorted(TEACHERS))
args = p.parse_args()
teacher = TEACHERS[args.teacher]().half()
teacher(torch.randn(2, 4))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL101:25");
  EXPECT_TRUE(std::none_of(out[0].notes.begin(), out[0].notes.end(),
                           [](const Note& n) { return n.message.find("assuming") != std::string::npos; }));
}

// A DataLoader's batches keep the dtypes of its dataset's tensors: a
// TensorDataset's, or what a Dataset class's __getitem__ returns.
TEST_F(PythonProgram, BatchesOfADataLoaderKeepTheirDatasetsDtypes) {
  const std::string file = write("train.py", R"(import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Features(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 4)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "id": i}


model = torch.nn.Linear(4, 4).cuda().half()
for i, (x, y) in enumerate(DataLoader(TensorDataset(torch.randn(8, 4), torch.zeros(8)), batch_size=2)):
    model(x)
for batch in DataLoader(Features(8), batch_size=2):
    model(batch["x"])
for x, y in DataLoader(TensorDataset(torch.randn(8, 4).half(), torch.zeros(8)), batch_size=2):
    model(x)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:18,DL101:20");
}

// An EmbeddingBag's pooled rows have its weight's dtype, under autocast too
// (it is on none of autocast's lists); cat promotes them with Half activations.
TEST_F(PythonProgram, AnEmbeddingBagsRowsHaveItsWeightsDtype) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn

mlp = nn.Linear(4, 4).cuda()
bag = nn.EmbeddingBag(10, 4).cuda()
h = torch.randn(4, 4, dtype=torch.float16)
with torch.autocast("cuda", dtype=torch.float16):
    dense = mlp(torch.randn(2, 4, device="cuda"))
    pooled = bag(torch.zeros(2, 3, dtype=torch.long, device="cuda"))
    joined = torch.cat([dense, pooled], dim=1)
torch.mm(pooled, h)
torch.mm(joined[:, :4], h)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:11,DL101:12");
}

// index_add_ and scatter_add_ raise unless the source has self's dtype: Half
// expert outputs into a Float accumulator are DL102; the Long index is no operand.
TEST_F(PythonProgram, AnIndexAddOfHalfRowsIntoAFloatBufferRaises) {
  const std::string file = write("moe.py", R"(import torch

out = torch.zeros(8, 4)
rows = torch.zeros(2, dtype=torch.long)
y = torch.randn(2, 4, dtype=torch.float16)
out.index_add_(0, rows, y)
out.scatter_add_(0, rows.unsqueeze(1).expand(2, 4), y)
out.index_add_(0, rows, y.float())
out.add_(y)
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL102:6,DL102:7");
  EXPECT_NE(out[0].message.find("'index_add_' writes a Half source into 'out', which is Float"), std::string::npos)
      << out[0].message;
}

// `for m in model.modules(): if isinstance(m, Router): m.float()` converts
// the routers of a BFloat16 model back to Float, and only them: the router's
// gate then meets BFloat16 activations.
TEST_F(PythonProgram, ModulesOfAClassConvertedInALoopOverModules) {
  const std::string file = write("moe.py", R"(import torch
import torch.nn as nn


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 2)

    def forward(self, x):
        return self.gate(x)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.router = Router()

    def forward(self, x):
        h = self.proj(x)
        return h, self.router(h)


model = Layer().cuda().to(torch.bfloat16)
for m in model.modules():
    if isinstance(m, Router):
        m.float()
model(torch.randn(2, 4, device="cuda", dtype=torch.bfloat16))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL101:11");
  EXPECT_NE(out[0].message.find("BFloat16"), std::string::npos) << out[0].message;
}

// A custom Function nine calls deep: main -> Trainer.fit -> run_epoch ->
// train_step -> the model -> a block -> its FFN -> the fused sublayer -> the
// Function's forward, and its backward.
TEST_F(PythonProgram, ACustomFunctionDeepInATrainersModelIsFollowed) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(weight)
        return F.linear(x, weight)

    @staticmethod
    def backward(ctx, grad_out):
        (weight,) = ctx.saved_tensors
        return grad_out.matmul(weight), None


class Fused(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(4, 4))

    def forward(self, x):
        return LinearFn.apply(x, self.weight)


class FFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = Fused()

    def forward(self, x):
        return self.up(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = FFN()

    def forward(self, x):
        return x + self.up(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Trainer:
    def __init__(self, model):
        self.model = model

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).float().sum()
        loss.backward()

    def run_epoch(self):
        for _ in range(3):
            self.train_step(torch.randn(2, 4, device="cuda"))

    def fit(self, epochs):
        for _ in range(epochs):
            self.run_epoch()


def main():
    Trainer(Model().cuda()).fit(2)


if __name__ == "__main__":
    main()
)");
  EXPECT_EQ(only(findings({file})), "DL103:15");
}

// Settings read from a config file: the program accepts bfloat16, though the
// file runs it in float16. Every accepted value is a configuration a user
// runs: under bfloat16 autocast the scaler only costs time (DL209).
TEST_F(PythonProgram, AScalerEnabledForAnOtherValueThanTheDefault) {
  write("config.yaml", "train:\n  amp_dtype: float16\n");
  const std::string file = write("train.py", R"(import torch
import yaml

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
with open("config.yaml") as f:
    cfg = yaml.safe_load(f)
model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
with torch.autocast("cuda", dtype=DTYPES[cfg["train"]["amp_dtype"]]):
    loss = model(torch.randn(2, 4, device="cuda")).float().sum()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL209:9");
  EXPECT_EQ(out[0].notes.back().message, "assuming train.amp_dtype in config.yaml is \"bfloat16\"");
}

TEST_F(PythonProgram, ALibraryEncoderComputesInItsParametersDtype) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn

layer = nn.TransformerEncoderLayer(64, 4, batch_first=True)
teacher = nn.TransformerEncoder(layer, 2).half()
rnn = nn.LSTM(64, 64, batch_first=True).half()
proj = nn.Linear(64, 32)
with torch.no_grad():
    hidden = teacher(torch.randn(2, 8, 64).half())
    out, state = rnn(hidden)
print(proj(out[:, 0]).shape)
print(proj(hidden[:, 0]).shape)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:11,DL101:12");
}

// A backward on the unscaled loss, then unscale_() and step(): the unscale
// divided gradients that were never scaled.
TEST_F(PythonProgram, UnscalingTheGradientsOfAnUnscaledBackward) {
  const std::string file = write("train.py", R"(import torch

model = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda")
for x in [torch.randn(2, 4, device="cuda")]:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().sum()
    loss.backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL207:12");
  EXPECT_EQ(out[0].notes.front().location.line, 9u);
}

// {**DEFAULTS, **json.load(f)}: the file's keys over the defaults, each a
// setting of the file; a default's key the file may set too.
TEST_F(PythonProgram, ADictDisplayOfDefaultsAndAConfigFile) {
  write("conf.json", R"({"ema_dtype": "float16"})");
  const std::string file = write("train.py", R"(import json

import torch

DEFAULTS = {"ema_dtype": "float32", "amp": "no"}
STORAGE = {"float32": torch.float32, "float16": torch.float16}
with open("conf.json") as f:
    cfg = {**DEFAULTS, **json.load(f)}
cfg["ema_torch_dtype"] = STORAGE[cfg["ema_dtype"]]
ema = torch.nn.Linear(4, 4).to(cfg["ema_torch_dtype"])
print(ema(torch.randn(2, 4)))
model = torch.nn.Linear(4, 4)
if cfg["amp"] == "fp16":
    model.half()
print(model(torch.randn(2, 4)))
)");
  const auto out = findings({file});
  EXPECT_EQ(ruleLines(out), "DL101:11,DL101:15");
}

// Layers appended under an if (`if not last: layers.append(nn.ReLU())`): the
// Sequential still runs its Linear layers.
TEST_F(PythonProgram, ALayerAppendedOnSomePathsKeepsTheSequential) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


def mlp(sizes, last_act):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


head = mlp([16, *(32, 32), 1], last_act=False).half()
logits = head(torch.randn(4, 16).half()).squeeze(1)
loss = nn.functional.binary_cross_entropy_with_logits(logits, torch.ones(4).half())
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL105:16");
}

// A free string setting compared with two values: another value takes the
// else branch (a static loss scale: float(spec)), unequal to both.
TEST_F(PythonProgram, AnotherValueOfAFreeStringTakesTheElseBranch) {
  const std::string file = write("train.py", R"(import argparse

import torch


def loss_scaling(spec):
    if spec == "none":
        return None, 1.0
    if spec == "dynamic":
        return torch.amp.GradScaler("cuda"), 1.0
    return None, float(spec)


ap = argparse.ArgumentParser()
ap.add_argument("--loss-scale", default="dynamic")
scaler, static_scale = loss_scaling(ap.parse_args().loss_scale)
model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(2, 4, device="cuda")).sum()
if scaler is not None:
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
else:
    if static_scale != 1.0:
        loss = loss * static_scale
    loss.backward()
    for p in model.parameters():
        p.grad.div_(static_scale)
    opt.step()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL203:27");
  EXPECT_EQ(out[0].notes.back().message, "assuming --loss-scale is another value");
}

// LoRA adapters made in the base layer's dtype (dtype=child.weight.dtype)
// inside a Half model: the trainable parameters are Half.
TEST_F(PythonProgram, AdaptersMadeInTheBaseWeightsDtypeOfAHalfModel) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM


class LoRALinear(nn.Module):
    def __init__(self, base, r):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.zeros(r, base.in_features, dtype=base.weight.dtype))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, dtype=base.weight.dtype))


model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
for name, module in list(model.named_modules()):
    for child_name, child in list(module.named_children()):
        if isinstance(child, nn.Linear) and child_name in ("q_proj", "v_proj"):
            setattr(module, child_name, LoRALinear(child, 8))
for n, p in model.named_parameters():
    p.requires_grad = "lora_" in n
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
scaler.scale(model(torch.ones(1, 4, dtype=torch.long)).logits.float().sum()).backward()
scaler.step(optimizer)
scaler.update()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL202:24");
}

// Callbacks called by name through getattr, the hook's arguments handed on
// by *args: a hook that unscales again is the mistake, at its own line.
TEST_F(PythonProgram, ACallbackHookCalledThroughGetattrWithStarArgs) {
  const std::string file = write("train.py", R"(import torch


class GradNormMonitor:
    def on_before_optimizer_step(self, trainer, optimizer):
        trainer.scaler.unscale_(optimizer)


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = list(callbacks)
        self.model = torch.nn.Linear(4, 4).cuda()
        self.scaler = torch.amp.GradScaler("cuda")
        self.optimizer = torch.optim.AdamW(self.model.parameters())

    def _call(self, hook, *args, **kwargs):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args, **kwargs)

    def fit(self, loader):
        for x in loader:
            self.scaler.scale(self.model(x).float().sum()).backward()
            self.scaler.unscale_(self.optimizer)
            self._call("on_before_optimizer_step", self.optimizer)
            self.scaler.step(self.optimizer)
            self.scaler.update()


Trainer([GradNormMonitor()]).fit([torch.randn(2, 4, device="cuda")])
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL201:6");
  EXPECT_EQ(out[0].notes.front().message, "first unscale here");
}

// cfg = dict(DEFAULTS); cfg.update(json.load(f)): a default's key is a
// setting of the file, which may set it; an optimizer class of the program's
// own (class Muon(torch.optim.Optimizer)) stepped on scaled gradients.
TEST_F(PythonProgram, DefaultsUpdatedFromAConfigFileAndAnOptimizerOfTheProgramsOwn) {
  const std::string file = write("train.py", R"(import json

import torch

DEFAULTS = {"amp": "bf16", "lr": 0.02}
AMP = {"off": None, "fp16": torch.float16, "bf16": torch.bfloat16}


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=0.02):
        super().__init__(params, dict(lr=lr))


cfg = dict(DEFAULTS)
with open("train_config.json") as f:
    cfg.update(json.load(f))
model = torch.nn.Linear(4, 4).cuda()
muon = Muon(model.parameters(), lr=cfg["lr"])
scaler = torch.amp.GradScaler("cuda", enabled=cfg["amp"] == "fp16")
with torch.autocast("cuda", dtype=AMP[cfg["amp"]] or torch.bfloat16, enabled=cfg["amp"] != "off"):
    loss = model(torch.randn(2, 4, device="cuda")).float().sum()
scaler.scale(loss).backward()
muon.step()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL208:23");
  EXPECT_EQ(out[0].notes.back().message, "assuming amp in train_config.json is \"fp16\"");
}

// diffusers' idiom: the optimizer over itertools.chain(unet.parameters(),
// text_encoder.parameters()) after the text encoder was made Half; the
// expression continued by a backslash is one expression.
TEST_F(PythonProgram, AHalfGroupAmongTheOptimizersParametersIsUnscaled) {
  const std::string file = write("train.py", R"(import itertools

import torch
from transformers import CLIPTextModel, UNet2DConditionModel

unet = UNet2DConditionModel.from_pretrained("m", subfolder="unet")
text_encoder = CLIPTextModel.from_pretrained("m", subfolder="text_encoder")
text_encoder.to("cuda", dtype=torch.float16)
train_text_encoder = True
params = itertools.chain(unet.parameters(), text_encoder.parameters()) if train_text_encoder \
    else unet.parameters()
optimizer = torch.optim.SGD(params, lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
scaler.scale(unet(torch.randn(1, 4)).sample.float().mean()).backward()
scaler.unscale_(optimizer)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL202:15");
}

// timm's layer-decay groups: a dict keyed at run time ((layer_id, no_wd)),
// each group's "params" list grown in the loop; one group stands for all.
TEST_F(PythonProgram, ParameterGroupsInADictKeyedAtRunTime) {
  const std::string file = write("train.py", R"(import torch


def param_groups_layer_decay(model, weight_decay):
    groups = {}
    for name, p in model.named_parameters():
        no_wd = p.ndim <= 1
        key = (name.split(".")[0], no_wd)
        if key not in groups:
            groups[key] = {"params": [], "weight_decay": 0.0 if no_wd else weight_decay}
        groups[key]["params"].append(p)
    return list(groups.values())


model = torch.nn.Linear(4, 4).half()
opt = torch.optim.AdamW(param_groups_layer_decay(model, 0.05), lr=1e-3)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL304:16");
}

// A config filled from the environment field by field (kwargs[f.name] = ...
// over dataclasses.fields(cls)), then cls(**kwargs): every field may be given,
// each a setting of its default.
TEST_F(PythonProgram, ADataclassFilledFromTheEnvironmentByFieldName) {
  const std::string file = write("train.py", R"(import os
from dataclasses import dataclass, fields

import torch


@dataclass
class Config:
    precision: str = "fp32"
    lr: float = 0.1

    @classmethod
    def from_env(cls):
        kwargs = {}
        for f in fields(cls):
            raw = os.environ.get("APP_" + f.name.upper())
            if raw is not None:
                kwargs[f.name] = type(f.default)(raw)
        return cls(**kwargs)


cfg = Config.from_env()
model = torch.nn.Linear(4, 4)
if cfg.precision == "fp16":
    model.half()
print(model(torch.randn(2, 4)))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL101:26");
  EXPECT_NE(out[0].notes.back().message.find("is \"fp16\""), std::string::npos) << out[0].notes.back().message;
}

// A generator picking the trainable parameters by name (yield p, yield from)
// is the list it yields: the optimizer over it has their dtype.
TEST_F(PythonProgram, AGeneratorOfParametersFeedsTheOptimizer) {
  const std::string file = write("train.py", R"(import torch


def trainable(model):
    for name, p in model.named_parameters():
        if "bias" not in name:
            yield p


def all_of(model):
    yield from model.parameters()


model = torch.nn.Linear(4, 4).half()
opt = torch.optim.AdamW(trainable(model), lr=1e-3)
other = torch.optim.Adam(all_of(model), lr=1e-3)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL304:15,DL304:16");
}

// A config file read with `yaml.safe_load(f) or {}` is the file's keys (the
// `or {}` guards an empty file); the dataclass built from it keeps them as
// settings.
TEST_F(PythonProgram, AConfigFileOrAnEmptyDictIsTheFile) {
  write("run.yaml", "precision: fp16_pure\n");
  const std::string file = write("train.py", R"(from dataclasses import dataclass

import torch
import yaml


@dataclass
class Config:
    precision: str = "amp"


with open("run.yaml") as f:
    raw = yaml.safe_load(f) or {}
cfg = Config(**raw)
model = torch.nn.Linear(4, 4)
if cfg.precision == "fp16_pure":
    model = model.half()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL304:18");
  EXPECT_EQ(out[0].notes.back().message, "assuming precision in run.yaml is \"fp16_pure\"");
}

// Tensors taken apart (q, k, v = (t.reshape(...) for t in qkv), a, b = pair)
// keep their dtype; math.sqrt(...) is a number, which does not change a
// tensor's; `.sum(0)` reduces one dim only (not DL105), and a method's tensor
// argument is named by its expression.
TEST_F(PythonProgram, TensorsTakenApartAndScaledByMathConstantsKeepTheirDtype) {
  const std::string file = write("ops.py", R"(import math

import torch
import torch.nn as nn

_K = math.sqrt(2.0 / math.pi)


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        pre = x.matmul(weight.t())
        ctx.save_for_backward(x, pre)
        return pre

    @staticmethod
    def backward(ctx, grad_out):
        x, pre = ctx.saved_tensors
        grad_pre = grad_out * (_K * pre)
        grad_b = grad_pre.sum(0)
        return None, grad_pre.t().mm(x.flatten(0, -2))


proj = nn.Linear(4, 12)
with torch.autocast("cuda", dtype=torch.float16):
    qkv = proj(torch.randn(2, 4)).reshape(2, 3, 4).permute(1, 0, 2)
    q, k, v = (t.reshape(2, 4) for t in qkv)
    scores = torch.empty(2, 2)
    torch.mm(q, k.t(), out=scores)
    y = Fn.apply(torch.randn(2, 4), proj.weight)
)");
  const auto out = findings({file});
  EXPECT_EQ(ruleLines(out), "DL102:29,DL103:21");
  const Finding* backward = withRule(out, "DL103");
  ASSERT_NE(backward, nullptr);
  EXPECT_NE(backward->message.find("'x.flatten(0, -2)': Float"), std::string::npos) << backward->message;
}

// A precision enum parsed from its value (Lightning's "bf16-true"), its
// members compared by identity and read through a property; a nested config
// made by field(default_factory=...). Every member is a configuration.
TEST_F(PythonProgram, APrecisionEnumParsedFromASettingIsFollowedPerMember) {
  const std::string file = write("train.py", R"(import argparse
import contextlib
import enum
from dataclasses import dataclass, field

import torch


class Precision(enum.Enum):
    FP32 = "32-true"
    BF16_MIXED = "bf16-mixed"
    BF16_TRUE = "bf16-true"

    @property
    def weight_dtype(self):
        return torch.bfloat16 if self is Precision.BF16_TRUE else torch.float32


@dataclass
class Optim:
    lr: float = 1e-3


@dataclass
class Config:
    precision: Precision = Precision.FP32
    optim: Optim = field(default_factory=Optim)


parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="32-true", choices=[p.value for p in Precision])
args = parser.parse_args()
cfg = Config(precision=Precision(args.precision))
model = torch.nn.Linear(4, 4).to(dtype=cfg.precision.weight_dtype)
opt = torch.optim.SGD(model.parameters(), lr=cfg.optim.lr)
ctx = torch.autocast("cuda", dtype=torch.bfloat16) if cfg.precision is Precision.BF16_MIXED else contextlib.nullcontext()
with ctx:
    loss = model(torch.randn(2, 4, device="cuda", dtype=cfg.precision.weight_dtype)).sum()
loss.backward()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL106:39");
  EXPECT_EQ(out[0].notes.back().message, "assuming --precision is \"bf16-true\"");
}

// argparse's type=Precision with choices=list(Precision) and a member as
// default; the autocast dtype looked up in a dict keyed by members.
TEST_F(PythonProgram, AnEnumOptionOfArgparseIsEachOfItsMembers) {
  const std::string file = write("train.py", R"(import argparse
import enum

import torch


class Precision(enum.Enum):
    FP32 = "fp32"
    FP16 = "fp16"

    @property
    def amp_dtype(self):
        return {Precision.FP16: torch.float16}.get(self)


parser = argparse.ArgumentParser()
parser.add_argument("--precision", type=Precision, choices=list(Precision), default=Precision.FP32)
args = parser.parse_args()
model = torch.nn.Linear(4, 4).cuda()
if args.precision.amp_dtype is not None:
    with torch.autocast("cuda", dtype=args.precision.amp_dtype):
        y = model(torch.randn(2, 4, device="cuda"))
    y.sum().backward()
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL105:23,DL106:23");
  EXPECT_EQ(out[0].notes.back().message, "assuming --precision is \"fp16\"");
}

// timm's idioms: a model registry keyed by fn.__name__, autocast made by
// functools.partial, an optional --clip-grad (None by default; given, it is
// not None).
TEST_F(PythonProgram, ARegistryAPartialAutocastAndAnOptionalClipAreFollowed) {
  const std::string file = write("train.py", R"(import argparse
from functools import partial

import torch
import torch.nn.functional as F

_models = {}


def register_model(fn):
    _models[fn.__name__] = fn
    return fn


@register_model
def tiny(**kwargs):
    return torch.nn.Linear(4, 4, **kwargs)


def create_model(name, **kwargs):
    return _models[name](**kwargs)


parser = argparse.ArgumentParser()
parser.add_argument("--clip-grad", type=float, default=None)
args = parser.parse_args()
model = create_model("tiny").cuda().half()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
with amp_autocast():
    loss = F.log_softmax(model(torch.randn(2, 4, dtype=torch.float16).float()), dim=-1).mean()
scaler.scale(loss).backward()
if args.clip_grad is not None:
    scaler.unscale_(opt)
scaler.step(opt)
)");
  // Half gradients raise at the unscale_() with --clip-grad given, at the
  // step() without it: one bug, reported where the defaults raise it.
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL104:32,DL202:36");
  EXPECT_EQ(out[1].notes.back().message, "the parameters of 'create_model(\"tiny\").cuda().half()' became Half here");
}

TEST_F(PythonProgram, ASyntaxErrorIsANoteAndTheRestIsAnalyzed) {
  const std::string file = write("train.py", R"(import torch
scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
scaler.step(opt)
scaler.step(opt)
def broken(:
    pass
)");
  const python::PythonAnalysisResult result = python::analyzePythonFiles({file});
  ASSERT_EQ(result.toolNotes.size(), 1u);
  EXPECT_NE(result.toolNotes[0].message.find("syntax error at line 6"), std::string::npos);
  EXPECT_TRUE(withRule(result.findings, "DL204"));
}

// Gradient accumulation that flushes the micro-batches left at the end of the
// epoch: `if pending:` after the loop runs only on paths where the last pass
// did not step (it reset `pending = 0`). Flushing unconditionally steps again
// with no backward since the last update().
TEST_F(PythonProgram, AFlushGuardedByTheAccumulationCounterStepsOnce) {
  const std::string program = R"(import torch

model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")


def optimizer_step():
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


pending = 0
for i in range(10):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(2, 4, device="cuda")).float().pow(2).mean()
    scaler.scale(loss / 4).backward()
    pending += 1
    if (i + 1) % 4 == 0:
        optimizer_step()
        pending = 0
FLUSH
)";
  const std::string guarded = withPlaceholder(program, "FLUSH", "if pending:\n    optimizer_step()");
  EXPECT_EQ(ruleLines(findings({write("guarded.py", guarded)})), "");
  const std::string unguarded = withPlaceholder(program, "FLUSH", "optimizer_step()");
  EXPECT_EQ(ruleLines(findings({write("unguarded.py", unguarded)})), "DL210:12");
}

// Callbacks built from names (a registry of lambdas, a comprehension) and
// fired through `fn = getattr(cb, hook, None); fn(self)`: each callback's hook
// runs once per firing, and a protocol mistake stays at the hook's line.
TEST_F(PythonProgram, ACallbackHookFromARegistryOfLambdasIsFollowedOnce) {
  const std::string file = write("trainer.py", R"(import torch


class GradNormLogger:
    def on_after_step(self, trainer):
        trainer.scaler.unscale_(trainer.optimizer)


class Printer:
    def on_after_step(self, trainer):
        print(trainer.steps)


CALLBACKS = {"grad_norm": lambda: GradNormLogger(), "print": lambda: Printer()}


class Trainer:
    def __init__(self, names):
        self.model = torch.nn.Linear(4, 4).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")
        self.callbacks = [CALLBACKS[name]() for name in names]
        self.steps = 0

    def fire(self, hook):
        for cb in self.callbacks:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(self)

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).float().pow(2).mean()
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        self.scaler.step(self.optimizer)
        self.fire("on_after_step")
        self.scaler.update()
        self.steps += 1


trainer = Trainer(["grad_norm", "print"])
for _ in range(3):
    trainer.step(torch.randn(2, 4, device="cuda"))
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL206:6");
}

// An EMA copy kept in Half and updated value by value over state_dict():
// the Float blend is rounded into it (DL102); kept in Float, it is clean.
TEST_F(PythonProgram, AnEmaUpdatedOverStateDictValues) {
  const std::string program = R"(import copy

import torch


class Ema:
    def __init__(self, model, dtype):
        self.module = copy.deepcopy(model).eval()
        self.module.to(dtype=dtype)

    @torch.no_grad()
    def update(self, model, blend=lambda e, m: 0.999 * e + 0.001 * m):
        for e, m in zip(self.module.state_dict().values(), model.state_dict().values()):
            e.copy_(blend(e, m))


model = torch.nn.Linear(4, 4)
ema = Ema(model, DTYPE)
ema.update(model)
)";
  EXPECT_EQ(ruleLines(findings({write("half_ema.py", withPlaceholder(program, "DTYPE", "torch.float16"))})),
            "DL102:14");
  EXPECT_EQ(ruleLines(findings({write("float_ema.py", withPlaceholder(program, "DTYPE", "torch.float32"))})), "");
}

// getattr(torch, args.amp_dtype) chooses the dtype by the option's value, as a
// dict of dtypes would: the run under bfloat16 scales a BFloat16 loss.
TEST_F(PythonProgram, ADtypeChosenByGetattrOnTorch) {
  const std::string file = write("train.py", R"(import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--amp-dtype", choices=["float16", "bfloat16"], default="float16")
opt = p.parse_args()
opt.amp_dtype = getattr(torch, opt.amp_dtype)
model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
with torch.autocast("cuda", dtype=opt.amp_dtype):
    loss = model(torch.randn(2, 4, device="cuda")).float().sum()
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL209:11");
  EXPECT_EQ(out[0].notes.back().message, "assuming --amp-dtype is \"bfloat16\"");
}

// A guard that restores the autocast state it found (is_autocast_enabled of
// the device) and never clears the cache: DL107 where it disables, once for
// the two optimizers stepped after it, in Python's spelling.
TEST_F(PythonProgram, ARestoringAutocastGuardWithoutClearingTheCache) {
  const std::string file = write("train.py", R"(import torch


class AutocastGuard:
    def __enter__(self):
        self.prev = torch.is_autocast_enabled("cuda")
        torch.set_autocast_enabled("cuda", True)
        return self

    def __exit__(self, exc_type, exc, tb):
        torch.set_autocast_enabled("cuda", self.prev)
        return False


model = torch.nn.Linear(4, 4).cuda()
head = torch.nn.Linear(4, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
for step in range(3):
    with AutocastGuard():
        loss = head(model(torch.randn(2, 4, device="cuda"))).float().pow(2).mean()
    loss.backward()
    opt.step()
    head_opt.step()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL107:11");
  EXPECT_NE(out[0].message.find("call torch.clear_autocast_cache() here"), std::string::npos) << out[0].message;
}

// A package whose __init__ defines the registry and then imports its models
// (`from . import vit`), which import register_model back from it (`from .
// import register_model`): the models register, as in Python, where a module
// imported in a cycle sees what its importer defined so far.
TEST_F(PythonProgram, ARegistryFilledThroughACircularPackageImport) {
  write("models/__init__.py", R"(_REG = {}


def register_model(fn):
    _REG[fn.__name__] = fn
    return fn


def create_model(name, **kwargs):
    if name not in _REG:
        raise KeyError(name)
    return _REG[name](**kwargs)


from . import vit  # noqa: E402
)");
  write("models/vit.py", R"(import torch

from . import register_model


@register_model
def tiny(**kwargs):
    return torch.nn.Linear(4, 4).half()
)");
  const std::string train = write("train.py", R"(import torch
from models import create_model

model = create_model("tiny")
y = model(torch.randn(2, 4))
)");
  EXPECT_EQ(only(findings({train})), "DL101:5");
}

// LoRA adapters injected at run time (setattr over named_modules), then
// merged by a loop over model.modules() with isinstance: the Float delta is
// added in place into the BFloat16 base weight (DL102).
TEST_F(PythonProgram, AdaptersInjectedAtRunTimeAreAmongTheModules) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, 2, bias=False)
        self.lora_B = nn.Linear(2, base.out_features, bias=False)

    @torch.no_grad()
    def merge(self):
        delta = self.lora_B.weight @ self.lora_A.weight
        self.base.weight.add_(delta)


model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)).to(torch.bfloat16)
for name, module in list(model.named_modules()):
    for child_name, child in list(module.named_children()):
        if isinstance(child, nn.Linear):
            setattr(module, child_name, LoRALinear(child))
for module in model.modules():
    if isinstance(module, LoRALinear):
        module.merge()
)");
  EXPECT_EQ(only(findings({file})), "DL102:15");
}
// Six settings, where every combination would take 64 runs: the last two
// found still meet each other's values under each precision
// (configurationRuns), and the second unscale needs both non-defaults with
// the scaler enabled. The notes name those three values only.
TEST_F(PythonProgram, TwoLateSettingsAreAnalyzedTogether) {
  const std::string file = write("train.py", R"(import argparse
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--precision", choices=["fp16", "fp32"], default="fp16")
ap.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
ap.add_argument("--compile", action="store_true")
ap.add_argument("--ema", action="store_true")
ap.add_argument("--log-grad-norm", action="store_true")
ap.add_argument("--clip", action="store_true")
args = ap.parse_args()
model = torch.nn.Linear(4, 4).cuda()
if args.compile:
    model = torch.compile(model)
if args.optimizer == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
ema = torch.optim.swa_utils.AveragedModel(model) if args.ema else None
for step in range(10):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(2, 4, device="cuda")).float().sum()
    scaler.scale(loss).backward()
    if args.log_grad_norm:
        scaler.unscale_(opt)
    if args.clip:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    if ema is not None:
        ema.update_parameters(model)
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL201:28");
  std::vector<std::string> assumed;
  for (const Note& note : out[0].notes)
    if (note.message.rfind("assuming", 0) == 0) assumed.push_back(note.message);
  EXPECT_EQ(assumed, (std::vector<std::string>{"assuming --precision is \"fp16\"", "assuming --log-grad-norm is True",
                                               "assuming --clip is True"}));
}
// A model made Half as a whole, then given a Float batch by a trainer's
// method: its layer raises, the call is reported; a layer the module converts
// itself keeps the finding in its forward.
TEST_F(PythonProgram, ModuleCalledWithAnInputOfAnotherDtypeIsReportedAtTheCall) {
  const std::string file = write("predict.py", R"(import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.proj(x)))


class MixedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4).half()

    def forward(self, x):
        return self.head(self.body(x))


class Predictor:
    def __init__(self, model):
        self.model = model.half()

    def predict(self, batch):
        return self.model(batch)

    def predict_cast(self, batch):
        return self.model(batch.half())


def main():
    p = Predictor(Encoder())
    p.predict(torch.rand(4, 16))
    p.predict_cast(torch.rand(4, 16))
    MixedHead()(torch.rand(2, 16))


main()
)");
  const auto out = findings({file});
  EXPECT_EQ(ruleLines(out), "DL101:22,DL101:30");
  for (const Finding& f : out)
    if (f.location.line == 30) {
      ASSERT_FALSE(f.notes.empty());
      EXPECT_EQ(f.notes[0].location.line, 12u);
      EXPECT_EQ(f.notes[0].message, "'linear' is here, in the module called");
    }
}
// A frozen Half embedding's optimizer stepped by the scaler: no gradient, so
// nothing to unscale: DL207, not "Attempting to unscale FP16 gradients".
TEST_F(PythonProgram, AFrozenHalfModulesOptimizerIsSteppedWithoutGradientsNotUnscaled) {
  const std::string file = write("train.py", R"(import torch

embed = torch.nn.Embedding(100, 8).cuda().half()
head = torch.nn.Linear(8, 1).cuda()
embed.requires_grad_(False)
embed_opt = torch.optim.SGD(embed.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for step in range(3):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = head(embed(torch.randint(0, 100, (4,)))).float().mean()
    scaler.scale(loss).backward()
    scaler.step(embed_opt)
    scaler.step(head_opt)
    scaler.update()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL207:13");
}
// A helper that unscales and clips, called once per micro-batch: its unscale
// ran in the call before, so the call is reported, the unscale a note.
TEST_F(PythonProgram, AHelpersUnscaleRepeatedByItsCallerIsReportedAtTheCall) {
  const std::string file = write("train.py", R"(import torch


def unscale_and_clip(scaler, optimizer, model):
    scaler.unscale_(optimizer)
    for group in optimizer.param_groups:
        torch.nn.utils.clip_grad_norm_(group["params"], 1.0)


model = torch.nn.Linear(8, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for micro in range(4):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(4, 8, device="cuda")).float().mean()
    scaler.scale(loss).backward()
    unscale_and_clip(scaler, optimizer, model)
scaler.step(optimizer)
scaler.update()
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL201:17");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes[0].location.line, 5u);
}
// argparse choices=sorted(DTYPES): the dict's keys are the values, and a
// setting with closed choices tested for None is not "given" besides them.
TEST_F(PythonProgram, ChoicesSortedFromADtypeDictAreTheSettingsValues) {
  const std::string file = write("train.py", R"(import argparse
import torch
import torch.nn.functional as F

EVAL_DTYPES = {"float32": torch.float32, "float16": torch.float16}
ap = argparse.ArgumentParser()
ap.add_argument("--eval-dtype", choices=sorted(EVAL_DTYPES))
args = ap.parse_args()
dtype = torch.float32
if args.eval_dtype:
    dtype = EVAL_DTYPES[args.eval_dtype]
model = torch.nn.Linear(8, 3).to(dtype)
logits = model(torch.randn(4, 8).to(dtype))
loss = F.cross_entropy(logits * torch.ones(1).item(), torch.zeros(4, dtype=torch.long))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL105:14");
  ASSERT_FALSE(out[0].notes.empty());
  EXPECT_EQ(out[0].notes.back().message, "assuming --eval-dtype is \"float16\"");
}
// ConfigParser(defaults=DEFAULTS): a key no section has is the DEFAULT
// section's, still a setting of the file.
TEST_F(PythonProgram, ConfigParserDefaultsAreTheSectionsFallback) {
  const std::string file = write("train.py", R"(import configparser
import torch

DEFAULTS = {"dtype": "fp16", "eps": "1e-8"}
parser = configparser.ConfigParser(defaults=DEFAULTS)
parser.read("train.ini")
section = parser["train"]
dtype = {"fp32": torch.float32, "fp16": torch.float16}[section.get("dtype")]
model = torch.nn.Linear(8, 1).to(dtype)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=section.getfloat("eps"))
)");
  const auto out = findings({file});
  ASSERT_EQ(only(out), "DL304:10");
  EXPECT_NE(out[0].message.find("eps=1e-08"), std::string::npos) << out[0].message;
}
// A warm-up that skips loss scaling, then one scaler step for both paths: on
// the warm-up path the step divides unscaled gradients. A step chosen by the
// same test is the clean look-alike.
TEST_F(PythonProgram, AWarmUpWithoutScalingBeforeOneScalerStepIsReported) {
  const std::string file = write("train.py", R"(import torch


def fit(model, opt, scaler, steps, warmup):
    for step in range(steps):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.randn(2, 4, device="cuda")).float().mean()
        opt.zero_grad()
        if step < warmup:
            loss.backward()
        else:
            scaler.scale(loss).backward()
        if step < warmup:
            opt.step()
        else:
            scaler.step(opt)
            scaler.update()


model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
fit(model, opt, torch.amp.GradScaler("cuda"), 1000, 100)
)");
  const auto out = findings({file});
  EXPECT_EQ(ruleLines(out), "");
  const std::string shared = write("shared.py", R"(import torch

model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for step in range(1000):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(2, 4, device="cuda")).float().mean()
    opt.zero_grad()
    if step < 100:
        loss.backward()
    else:
        scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
)");
  const auto warm = findings({shared});
  ASSERT_EQ(only(warm), "DL207:14");
  ASSERT_FALSE(warm[0].notes.empty());
  EXPECT_EQ(warm[0].notes[0].location.line, 11u);
}
// A fused path taken only in training (`if self.training`): model.eval()
// turns it off for the evaluation, which takes the plain layers (set S p13).
TEST_F(PythonProgram, EvalModeDecidesSelfTraining) {
  const std::string file = write("train.py", R"(import torch
import torch.nn as nn


class Adapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(8, 8).to(torch.bfloat16)
        self.lora_a = nn.Linear(8, 2, bias=False)

    def forward(self, x):
        if self.training:
            return self.base(x)
        return self.base(x) + self.lora_a(x).sum()


model = Adapter()
model.eval()
with torch.no_grad():
    model(torch.randn(2, 8, dtype=torch.bfloat16))
model.train()
model(torch.randn(2, 8, dtype=torch.bfloat16))
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:14");
}
// A dataclass filled from a YAML file (`Args(**yaml.safe_load(f))`): every
// field the file may set is a setting of it, its default the field's; a
// config path chosen as `sys.argv[1] if len(sys.argv) > 1 else "run.yaml"`
// is that file by default (set S p02, p12).
TEST_F(PythonProgram, DataclassFieldsFilledFromAYamlFileAreItsSettings) {
  const std::string file = write("train.py", R"(import sys
from dataclasses import dataclass

import torch
import yaml

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class Args:
    lr: float = 1e-3
    precision: str = "bf16"


with open(sys.argv[1] if len(sys.argv) > 1 else "run.yaml") as f:
    args = Args(**yaml.safe_load(f))
features = torch.tensor([[0.5, 1.0]], dtype=torch.float32)
scale = features.shape[-1] ** -0.5
head = torch.nn.Linear(2, 2).to(DTYPES[args.precision])
optimizer = torch.optim.Adam(head.parameters(), lr=args.lr)
out = head(features * scale)
)");
  write("run.yaml", "lr: 0.001\n");
  const auto out = findings({file});
  EXPECT_EQ(ruleLines(out), "DL101:22,DL304:21");
  for (const Finding& f : out)
    if (f.rule->id == std::string_view("DL304")) {
      ASSERT_FALSE(f.notes.empty());
      EXPECT_EQ(f.notes.back().message, "assuming precision in run.yaml is \"fp16\"");
    }
}
// An autocast instance applied to a bound method
// (`self.forward_loss = torch.autocast(...)(self._forward_loss)`): every call
// of it runs in the region (set S p20).
TEST_F(PythonProgram, AMethodWrappedByAnAutocastInstanceRunsInItsRegion) {
  const std::string file = write("train.py", R"(import torch


class Trainer:
    def __init__(self):
        self.gate = torch.nn.Linear(4, 2).cuda()
        self.forward_loss = torch.autocast(device_type="cuda", dtype=torch.float16)(self._forward_loss)

    def _forward_loss(self, x):
        return self.gate(x.float()).sum()

    def fit(self):
        return self.forward_loss(torch.randn(2, 4, device="cuda").half())


Trainer().fit()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL104:10");
}
// A precision plugin that switches autocast on for the device it holds
// (`torch.set_autocast_enabled(self.device_type, True)`, the device from
// `torch.device("cuda").type`): the forward in its `with` runs under autocast.
TEST_F(PythonProgram, AutocastSwitchedOnForADeviceHeldByAPluginIsFollowed) {
  const std::string file = write("train.py", R"(import torch


class MixedPrecision:
    def __init__(self, device):
        self.device_type = torch.device(device).type

    def __enter__(self):
        torch.set_autocast_enabled(self.device_type, True)
        torch.set_autocast_dtype(self.device_type, torch.float16)
        return self

    def __exit__(self, *exc):
        torch.set_autocast_enabled(self.device_type, False)
        torch.clear_autocast_cache()
        return False


head = torch.nn.Linear(4, 2).cuda()
with MixedPrecision("cuda"):
    feats = torch.nn.functional.linear(torch.randn(2, 4, device="cuda"), torch.randn(4, 4, device="cuda"))
    logits = head(feats.float())
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL104:22");
}
// DataLoader(..., collate_fn=collate): the batch is what the program's
// collate function makes of the samples (set S p15).
TEST_F(PythonProgram, ALoadersBatchIsWhatItsCollateFunctionMakes) {
  const std::string file = write("train.py", R"(import torch
from torch.utils.data import DataLoader


def make_loader(dataset):
    def collate(examples):
        pixels = torch.stack([e[0] for e in examples]).float()
        return {"pixel_values": pixels}

    return DataLoader(dataset, batch_size=4, collate_fn=collate)


encoder = torch.nn.Linear(8, 4).cuda().half()
for batch in make_loader(range(10)):
    latents = encoder(batch["pixel_values"].cuda())
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL101:15");
}
// A YAML file merged over defaults by a recursive helper that walks its
// sections (`for k, v in override.items()`): each of its many entries in turn,
// so the nested setting stays one (set S p24).
TEST_F(PythonProgram, AConfigMergedEntryByEntryKeepsItsSettings) {
  const std::string file = write("train.py", R"(import copy

import torch
import yaml

PARAM_DTYPES = {"fp32": torch.float32, "fp16": torch.float16}
DEFAULTS = {"optim": {"lr": 3e-4, "eps": 1e-8}}


def merge(base, override):
    out = copy.deepcopy(base)
    for k, v in override.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


with open("run.yaml") as f:
    s = merge(DEFAULTS, yaml.safe_load(f))
model = torch.nn.Linear(4, 4).to(dtype=PARAM_DTYPES[s["student"]["param_dtype"]])
optimizer = torch.optim.AdamW(model.parameters(), eps=s["optim"]["eps"])
)");
  write("run.yaml",
        "student:\n  param_dtype: fp32\n  width: 512\ndata:\n  train: a.npy\n  valid: b.npy\n  seq_len: 512\n"
        "optim:\n  lr: 3.0e-4\n  eps: 1.0e-8\nlog:\n  every: 10\n");
  EXPECT_EQ(ruleLines(findings({file})), "DL304:20");
}
// A trainer class no run reaches, analyzed from unknown arguments: a later
// test of the attribute an earlier `if` tested goes the same way, across the
// loop over callbacks between them (set S p07): the static-scale path and the
// scaler's path do not mix (no DL204, no DL210).
// Its twin with the update forgotten on the scaler's path is still reported.
TEST_F(PythonProgram, ARepeatedTestOfAnAttributeTakesTheSamePaths) {
  const std::string trainer = R"(import torch


class Trainer:
    def __init__(self, cfg, model, callbacks):
        self.model = model
        self.callbacks = list(callbacks)
        self.static_scale = cfg.scale if cfg.mode == "static" else None
        self.scaler = torch.cuda.amp.GradScaler()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def _step(self):
        if self.static_scale is not None:
            self.optimizer.step()
        else:
            self.scaler.step(self.optimizer)
        for callback in self.callbacks:
            callback(self)
        if self.static_scale is None:
            self.scaler.update()

    def fit(self, loader):
        for x in loader:
            with torch.autocast("cuda"):
                loss = self.model(x).sum()
            if self.static_scale is not None:
                loss.backward()
            else:
                self.scaler.scale(loss).backward()
            self._step()
)";
  EXPECT_EQ(ruleLines(findings({write("clean.py", trainer)})), "");
  std::string forgotten = trainer;
  forgotten.replace(forgotten.find("is None:\n            self.scaler.update()"),
                    std::string("is None:\n            self.scaler.update()").size(),
                    "is not None:\n            self.scaler.update()");
  EXPECT_EQ(ruleLines(findings({write("buggy.py", forgotten)})), "DL204:16,DL210:20");
}
// nanoGPT's idioms: the low precision the GPU has (bfloat16 where
// is_bf16_supported(), else float16), and a configurator exec'd at the top
// level that may override any plain global (`--dtype=float32`). A scaler
// enabled for every dtype but float32 scales under BFloat16 autocast.
TEST_F(PythonProgram, ConfiguratorGlobalsAndTheGpusLowPrecisionAreSettings) {
  const std::string file = write("train.py", R"(from contextlib import nullcontext

import torch

device = 'cuda'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
exec(open('configurator.py').read())
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device == 'cpu' else torch.amp.autocast(device_type='cuda', dtype=ptdtype)
model = torch.nn.Linear(4, 4).to(device)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.cuda.amp.GradScaler(enabled=(dtype != 'float32'))
for it in range(10):
    with ctx:
        loss = torch.nn.functional.cross_entropy(model(torch.randn(2, 4, device=device)), torch.zeros(2).long())
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
)");
  write("configurator.py", "import sys\nfor arg in sys.argv[1:]:\n    exec(open(arg).read())\n");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL209:12");
  EXPECT_TRUE(std::any_of(out[0].notes.begin(), out[0].notes.end(),
                          [](const Note& n) { return n.message == "assuming --dtype is \"bfloat16\""; }));
}
// A config filled from the environment field by field through a helper
// (`default if raw is None else cast(raw)`, cast = type(default)): the
// default stands for the variable, whose other values are the keys the
// program looks the field up in (set Y p18).
TEST_F(PythonProgram, AFieldFilledFromTheEnvironmentByAHelperIsASetting) {
  const std::string file = write("train.py", R"(import os
from dataclasses import dataclass

import torch

PRECISIONS = {'float32': torch.float32, 'float16': torch.float16, 'bfloat16': torch.bfloat16}


def _env(name, default, cast=str):
    raw = os.environ.get(name)
    return default if raw is None or raw == '' else cast(raw)


@dataclass
class Config:
    lr: float = 1e-3
    precision: str = 'float32'


def from_env():
    cfg = Config()
    for name, default in vars(Config()).items():
        setattr(cfg, name, _env('RL_' + name.upper(), default, type(default)))
    return cfg


cfg = from_env()
net = torch.nn.Linear(4, 4).to('cuda', PRECISIONS[cfg.precision])
opt = torch.optim.Adam(net.parameters(), eps=1e-5)
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL304:29");
  EXPECT_EQ(out[0].notes.back().message, "assuming $RL_PRECISION is \"float16\"");
}
// An environment variable named by an f-string (`f"SR_{name}"`), and an
// fp16 EMA updated in place from Float weights (set Y p11).
TEST_F(PythonProgram, AnFStringNamesTheVariableItReads) {
  const std::string file = write("train.py", R"(import os
import torch

_EMA_DTYPE = {"fp32": torch.float32, "fp16": torch.float16}


def _env(name, default, cast=str):
    return cast(os.environ.get(f"SR_{name}", default))


ema_dtype = _env("EMA_DTYPE", "fp16")
model = torch.nn.Linear(4, 4).cuda()
ema = torch.nn.Linear(4, 4).cuda().to(_EMA_DTYPE[ema_dtype])
with torch.no_grad():
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(0.99).add_(p.detach(), alpha=0.01)
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL102:16");
  EXPECT_EQ(out[0].notes.back().message, "assuming $SR_EMA_DTYPE is \"fp16\"");
}
// timm's NativeScaler wraps the GradScaler: DL209 is where the program
// makes its scaler, the wrapper (set Y p14).
TEST_F(PythonProgram, AScalerMadeByAWrapperIsReportedWhereTheWrapperIsMade) {
  const std::string file = write("train.py", R"(import torch


class NativeScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()


model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_scaler = NativeScaler()
for _ in range(3):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(torch.randn(2, 4, device="cuda")).sum()
    loss_scaler(loss, optimizer)
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL209:16");
}
// Autocast switched on for one module's forward by hooks the program
// registers (register_forward_pre_hook / register_forward_hook), the previous
// state kept on a stack: the post-hook's restore leaves the cache uncleared
// (set Y p23).
TEST_F(PythonProgram, ForwardHooksRunAroundTheModulesCall) {
  const std::string file = write("train.py", R"(import torch


class AutocastHooks:
    def __init__(self, dtype):
        self.dtype = dtype
        self._saved = []

    def _pre(self, module, args):
        self._saved.append(torch.is_autocast_enabled("cuda"))
        torch.set_autocast_enabled("cuda", True)
        torch.set_autocast_dtype("cuda", self.dtype)

    def _post(self, module, args, output):
        enabled = self._saved.pop()
        torch.set_autocast_enabled("cuda", enabled)
        return output


model = torch.nn.Linear(4, 4).cuda()
hooks = AutocastHooks(torch.float16)
model.register_forward_pre_hook(hooks._pre)
model.register_forward_hook(hooks._post)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 4, device="cuda")).float().sum()
    loss.backward()
    optimizer.step()
)");
  EXPECT_EQ(ruleLines(findings({file})), "DL107:16");
}
// A dict comprehension over named_parameters(): its values alike under
// keys not known, so an EMA shadow kept in a lower dtype is followed.
TEST_F(PythonProgram, ADictComprehensionsValuesAreFollowed) {
  const std::string file = write("train.py", R"(import argparse
import torch

EMA_DTYPES = {'float32': torch.float32, 'bfloat16': torch.bfloat16}
ap = argparse.ArgumentParser()
ap.add_argument('--ema-dtype', choices=sorted(EMA_DTYPES), default='float32')
args = ap.parse_args()
model = torch.nn.Linear(4, 4).cuda()
dtype = EMA_DTYPES[args.ema_dtype]
shadow = {n: p.detach().clone().to(dtype) for n, p in model.named_parameters() if p.requires_grad}
with torch.no_grad():
    for n, p in model.named_parameters():
        if n in shadow:
            shadow[n].mul_(0.99).add_(p.detach(), alpha=0.01)
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL102:14");
  EXPECT_EQ(out[0].notes.back().message, "assuming --ema-dtype is \"bfloat16\"");
}
// A GAN's d_step() and g_step() each end in update(), both called in one
// iteration: the second is DL210 (RULES.md: a second update() in one
// iteration), though a step() came between. One update() per pass of the
// loop is none (set Y p17).
TEST_F(PythonProgram, ASecondUpdateInOneIterationIsReported) {
  const std::string gan = R"(import torch

G = torch.nn.Linear(4, 4).cuda()
D = torch.nn.Linear(4, 1).cuda()
opt_g = torch.optim.Adam(G.parameters())
opt_d = torch.optim.Adam(D.parameters())
scaler = torch.amp.GradScaler("cuda")


def d_step(real):
    with torch.autocast("cuda"):
        d_loss = D(real).float().mean() - D(G(real).detach()).float().mean()
    scaler.scale(d_loss).backward()
    scaler.step(opt_d)
    scaler.update()


def g_step(real):
    with torch.autocast("cuda"):
        g_loss = -D(G(real)).float().mean()
    scaler.scale(g_loss).backward()
    scaler.step(opt_g)
    scaler.update()


for real in [torch.randn(2, 4, device="cuda")] * 10:
    d_step(real)
    g_step(real)
)";
  EXPECT_EQ(ruleLines(findings({write("gan.py", gan)})), "DL210:23");
  std::string once = gan;
  once.replace(once.find("    scaler.step(opt_d)\n    scaler.update()"),
               std::string("    scaler.step(opt_d)\n    scaler.update()").size(), "    scaler.step(opt_d)");
  EXPECT_EQ(ruleLines(findings({write("once.py", once)})), "");
}
// HfArgumentParser's idiom: arguments added by a loop over each dataclass's
// fields (choices in their metadata), the namespace spread back into the
// dataclasses, and `torch_dtype in ["auto", None]` (set Z p01).
TEST_F(PythonProgram, DataclassesFilledFromAFieldsLoopParserAreSettings) {
  const std::string file = write("train.py", R"(import argparse
import dataclasses
from dataclasses import dataclass, field

import torch


@dataclass
class ModelArguments:
    torch_dtype: str = field(default="auto", metadata={"choices": ["auto", "float16", "float32"]})


@dataclass
class TrainingArguments:
    adam_epsilon: float = 1e-8


def parse_args_into_dataclasses(argv=None):
    parser = argparse.ArgumentParser()
    for group in (ModelArguments, TrainingArguments):
        for f in dataclasses.fields(group):
            parser.add_argument(f"--{f.name}", default=f.default, **dict(f.metadata))
    ns = parser.parse_args(argv)
    out = []
    for g in (ModelArguments, TrainingArguments):
        out.append(g(**{k: v for k, v in vars(ns).items()}))
    return tuple(out)


model_args, training_args = parse_args_into_dataclasses()
torch_dtype = model_args.torch_dtype if model_args.torch_dtype in ["auto", None] else getattr(torch, model_args.torch_dtype)
model = torch.nn.Linear(4, 4).to(dtype=None if torch_dtype == "auto" else torch_dtype)
opt = torch.optim.AdamW(model.parameters(), eps=training_args.adam_epsilon)
)");
  const auto out = findings({file});
  ASSERT_EQ(ruleLines(out), "DL304:33");
  EXPECT_EQ(out[0].notes.back().message, "assuming ModelArguments.torch_dtype is \"float16\"");
}
}  // namespace
}  // namespace dtype_lint::testing
