#!/usr/bin/env python3
"""Writes N LibTorch training translation units of the shapes real projects
have (models, data, losses, optimizers, a hand-written GradScaler, autocast,
helpers), mostly clean with a few bugs, for the analyzer speed benchmark.

  generate_corpus.py N OUT_DIR [--own-header]

Each TU is different (model, sizes, training loop, helpers), so that no two
parse the same; all start with <torch/torch.h>, as training code does, or,
with --own-header, with their own header (train_NNN.h: LibTorch, then the
model), as files of real projects do.
"""
import random
import sys
from pathlib import Path

SCALER = """#pragma once
#include <torch/torch.h>

#include <map>

class GradScaler {
 public:
  explicit GradScaler(double scale = 65536.0) : scale_(scale) {}
  torch::Tensor scale(const torch::Tensor& loss) { return loss * scale_; }
  void unscale_(torch::optim::Optimizer& optimizer) {
    bool inf = false;
    for (auto& group : optimizer.param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) {
          p.mutable_grad().mul_(1.0 / scale_);
          inf = inf || !torch::isfinite(p.grad()).all().item<bool>();
        }
    found_inf_[&optimizer] = inf;
  }
  void step(torch::optim::Optimizer& optimizer) {
    if (!found_inf_.count(&optimizer)) unscale_(optimizer);
    if (!found_inf_[&optimizer]) optimizer.step();
  }
  void update() {
    bool inf = false;
    for (const auto& [optimizer, found] : found_inf_) inf = inf || found;
    scale_ = inf ? scale_ / 2 : scale_;
    found_inf_.clear();
  }

 private:
  double scale_;
  std::map<torch::optim::Optimizer*, bool> found_inf_;
};
"""

MODELS = {
    "mlp": """struct Net{i}Impl : torch::nn::Module {{
  Net{i}Impl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        head(register_module("head", torch::nn::Linear(hidden, out))) {{}}
  torch::Tensor forward(torch::Tensor x) {{
    x = torch::{act}(fc1(x));
    x = torch::dropout(torch::{act}(fc2(x)), {drop}, is_training());
    return head(x);
  }}
  torch::nn::Linear fc1, fc2, head;
}};
TORCH_MODULE(Net{i});
""",
    "conv": """struct Net{i}Impl : torch::nn::Module {{
  Net{i}Impl(int64_t in, int64_t hidden, int64_t out)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, {channels}, 3).padding(1)))),
        norm(register_module("norm", torch::nn::BatchNorm2d({channels}))),
        head(register_module("head", torch::nn::Linear({channels} * in * in, out))) {{}}
  torch::Tensor forward(torch::Tensor x) {{
    x = torch::{act}(norm(conv(x)));
    return head(x.flatten(1));
  }}
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d norm;
  torch::nn::Linear head;
}};
TORCH_MODULE(Net{i});
""",
    "seq": """struct Net{i}Impl : torch::nn::Module {{
  Net{i}Impl(int64_t in, int64_t hidden, int64_t out) {{
    body = register_module("body", torch::nn::Sequential(torch::nn::Linear(in, hidden), torch::nn::LayerNorm(
        torch::nn::LayerNormOptions({{hidden}})), torch::nn::GELU(), torch::nn::Linear(hidden, out)));
  }}
  torch::Tensor forward(torch::Tensor x) {{ return body->forward(x); }}
  torch::nn::Sequential body{{nullptr}};
}};
TORCH_MODULE(Net{i});
""",
}

INPUTS = {"mlp": "torch::randn({{{batch}, {inp}}})", "seq": "torch::randn({{{batch}, {inp}}})",
          "conv": "torch::randn({{{batch}, 1, {inp}, {inp}}})"}

LOSSES = [
    "torch::nn::functional::cross_entropy(logits, targets)",
    "torch::nn::functional::nll_loss(torch::log_softmax(logits, 1), targets)",
    "torch::nn::functional::cross_entropy(logits, targets, "
    "torch::nn::functional::CrossEntropyFuncOptions().label_smoothing({smooth}))",
]

OPTIMIZERS = [
    "torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions({lr}).momentum(0.9));",
    "torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions({lr}));",
    "torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions({lr}).weight_decay(0.01));",
]

LOOPS = {
    "plain": """  for (int64_t step = 0; step < steps; ++step) {{
    optimizer.zero_grad();
    auto [inputs, targets] = next_batch(step);
    auto logits = model->forward(inputs);
    auto loss = {loss};
    loss.backward();
    {clip}optimizer.step();
    log_step(step, loss);
  }}
""",
    "scaler": """  GradScaler scaler({scale});
  for (int64_t step = 0; step < steps; ++step) {{
    optimizer.zero_grad();
    auto [inputs, targets] = next_batch(step);
    at::autocast::set_enabled(true);
    auto logits = model->forward(inputs);
    auto loss = {loss};
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
    scaler.scale(loss).backward();
    scaler.unscale_(optimizer);
    {clip}scaler.step(optimizer);
    scaler.update();
    log_step(step, loss);
  }}
""",
    "accumulate": """  const int64_t accumulation = {accum};
  for (int64_t step = 0; step < steps; ++step) {{
    optimizer.zero_grad();
    for (int64_t micro = 0; micro < accumulation; ++micro) {{
      auto [inputs, targets] = next_batch(step * accumulation + micro);
      auto logits = model->forward(inputs);
      auto loss = {loss} / static_cast<double>(accumulation);
      loss.backward();
    }}
    {clip}optimizer.step();
  }}
""",
}

BUGS = [
    # DL101: a BFloat16 batch into a Float model outside autocast (reported at
    # the first Linear/Conv inside forward(), with a note at this call).
    "  auto probe = model->forward({input}.to(torch::kBFloat16));  // planted: DL101\n",
    # DL105: a softmax in Half outside autocast.
    "  auto confidence = torch::softmax({input}.to(torch::kHalf), -1);  // planted: DL105\n",
]


def translation_unit(i: int, rng: random.Random, own_header: bool) -> tuple:
    """The TU's text, and its own header's (None without --own-header)."""
    kind = rng.choice(list(MODELS))
    inp = rng.choice([8, 12, 16]) if kind == "conv" else rng.choice([32, 64, 128, 256])
    hidden, out, batch = rng.choice([64, 128, 256, 512]), rng.choice([2, 10, 100]), rng.choice([16, 32, 64])
    loop = rng.choice(list(LOOPS))
    loss = rng.choice(LOSSES).format(smooth=rng.choice([0.05, 0.1]))
    clip = rng.choice(["torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);\n    ", ""])
    input_expr = INPUTS[kind].format(batch=batch, inp=inp)
    model = MODELS[kind].format(i=i, act=rng.choice(["relu", "gelu", "tanh"]), drop=rng.choice([0.1, 0.2]),
                                channels=rng.choice([4, 8, 16]))
    libtorch = "#include <torch/torch.h>\n\n#include <iostream>\n#include <tuple>\n\n"
    header = f"#pragma once\n{libtorch}{model}" if own_header else None
    parts = [
        f"// Generated training program {i} ({kind} model, {loop} loop) for the analyzer benchmark.\n",
        f'#include "train_{i:03d}.h"\n\n' if own_header else "",
        "#include <ATen/autocast_mode.h>\n" if "at::autocast" in LOOPS[loop] else "",
        "" if own_header else libtorch,
        '#include "grad_scaler.h"\n\n' if loop == "scaler" else "",
        "" if own_header else model,
        f"""
namespace {{

std::tuple<torch::Tensor, torch::Tensor> next_batch(int64_t step) {{
  torch::manual_seed(step);
  return {{{input_expr}, torch::randint({out}, {{{batch}}}, torch::kLong)}};
}}

void log_step(int64_t step, const torch::Tensor& loss) {{
  if (step % {rng.choice([10, 50, 100])} == 0) std::cout << "step " << step << " loss " << loss.item<float>() << "\\n";
}}

double evaluate(Net{i}& model) {{
  torch::NoGradGuard no_grad;
  model->eval();
  auto [inputs, targets] = next_batch(-1);
  auto predictions = model->forward(inputs).argmax(1);
  model->train();
  return predictions.eq(targets).to(torch::kFloat).mean().item<double>();
}}

}}  // namespace

int main() {{
  Net{i} model({inp}, {hidden}, {out});
  {rng.choice(OPTIMIZERS).format(lr=rng.choice([1e-3, 3e-4, 0.01]))}
  const int64_t steps = {rng.choice([100, 500, 1000])};
""",
        LOOPS[loop].format(loss=loss, clip=clip, scale=rng.choice([1024.0, 65536.0]), accum=rng.choice([2, 4, 8])),
        rng.choice(BUGS).format(input=input_expr) if rng.random() < 0.25 else "",
        '  std::cout << "accuracy " << evaluate(model) << "\\n";\n  return 0;\n}\n',
    ]
    return "".join(parts), header


def main() -> None:
    own_header = "--own-header" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--own-header"]
    if len(args) != 2:
        sys.exit("usage: generate_corpus.py N OUT_DIR [--own-header]")
    count, out = int(args[0]), Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "grad_scaler.h").write_text(SCALER)
    rng = random.Random(2026)
    for i in range(count):
        text, header = translation_unit(i, rng, own_header)
        (out / f"train_{i:03d}.cpp").write_text(text)
        if header is not None:
            (out / f"train_{i:03d}.h").write_text(header)


if __name__ == "__main__":
    main()
