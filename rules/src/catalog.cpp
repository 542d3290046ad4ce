#include "dtype_lint/catalog.h"

#include <array>

namespace dtype_lint {
namespace {

constexpr std::array<RuleInfo, 22> kRules = {{
    {"DL101", "mixed-dtype-matmul", Severity::Error,
     "Matmul-family op with operands of different floating dtypes outside autocast",
     "A matmul-family op (mm, matmul, bmm, addmm, linear, conv, a Linear/Conv module call) whose floating "
     "operands have different dtypes and no autocast region casts them. LibTorch raises 'expected mat1 and "
     "mat2 to have the same dtype'.",
     true, true},
    {"DL102", "out-dtype-mismatch", Severity::Error,
     "out= or in-place op whose destination dtype differs from the computed dtype",
     "An out= variant (mm_out, addmm_out, ...) whose destination dtype differs from the dtype the op "
     "computes, or an in-place op that narrows its result into a lower-precision destination. out= and "
     "in-place ops are never autocast. LibTorch raises 'Expected out tensor to have dtype ...'.",
     true, true},
    {"DL103", "autocast-free-backward", Severity::Error,
     "Custom autograd backward mixes dtypes that autocast reconciled in forward",
     "A torch::autograd::Function whose forward ran under autocast and whose backward (which never runs "
     "under autocast) combines tensors of different floating dtypes in a matmul-family op.",
     true, true},
    {"DL104", "cast-inside-autocast", Severity::Warning,
     "Explicit cast of an operand inside an autocast region",
     "An explicit cast inside an autocast region that autocast undoes (to Float right before an op it runs "
     "in lower precision) or that loses precision for nothing (Float to Half/BFloat16 right before an op on "
     "its fp32 list). No-ops, casts to autocast's own dtype, upcasts and library code's casts are not flagged.",
     true, true},
    {"DL105", "low-precision-reduction", Severity::Warning,
     "Precision-sensitive op computed in Half outside autocast",
     "softmax, log_softmax, layer_norm, full sum/mean, exp, pow, norm or a loss computed on a Half tensor "
     "outside autocast and without dtype= or an upcast: overflows to inf/NaN (BFloat16 has Float's range).",
     true, true},
    {"DL106", "half-loss-backward", Severity::Warning,
     "backward() on a Half/BFloat16 loss",
     "backward() called on a loss computed in Half or BFloat16: the loss itself underflows or overflows.",
     true, true},
    {"DL107", "autocast-cache-not-cleared", Severity::Warning,
     "Autocast weight cache kept across an optimizer step",
     "Autocast caches the low-precision copy of each fp32 weight that requires grad; only Python's context "
     "manager clears it on exit. C++ code that keeps autocast on across optimizer.step(), or leaves the "
     "region without at::autocast::clear_cache(), computes the next forward with the old weights.",
     true, false},
    {"DL201", "double-unscale", Severity::Error,
     "Gradients unscaled twice before update()",
     "A second unscale of the same optimizer's gradients before update(), including on a later loop "
     "iteration and through helper functions.",
     true, true},
    {"DL202", "unscale-fp16-grads", Severity::Error,
     "Gradient scaler used on an optimizer whose parameters are Half",
     "unscale/step of an optimizer whose parameters (hence gradients) are Half. PyTorch raises "
     "'Attempting to unscale FP16 gradients.'",
     true, true},
    {"DL203", "manual-loss-scaling", Severity::Warning,
     "Hand-rolled loss scaling without inf/NaN handling",
     "Loss multiplied by a constant before backward() and gradients divided back by hand, or scaled while "
     "a GradScaler also scales.",
     true, true},
    {"DL204", "step-without-update", Severity::Warning,
     "scaler.step() in a loop whose iteration never calls scaler.update()",
     "The scale never adapts; after one overflow every step is skipped.", true, true},
    {"DL205", "clip-before-unscale", Severity::Warning,
     "Gradient clipping on scaled gradients",
     "clip_grad_norm_/clip_grad_value_ (or clipping written by hand) after scale(loss).backward() and "
     "before unscale_: the threshold applies to gradients multiplied by the scale.",
     true, true},
    {"DL206", "unscale-after-step", Severity::Error,
     "unscale_() after step() and before update()",
     "PyTorch raises 'unscale_() is being called after step().'", true, true},
    {"DL207", "step-without-scaled-backward", Severity::Warning,
     "scaler.step() without a scaled backward in this iteration",
     "The gradients are divided by the scale although backward ran on the unscaled loss: updates ~65536x "
     "too small.",
     true, true},
    {"DL208", "optimizer-step-bypasses-scaler", Severity::Warning,
     "optimizer.step() called directly on scaled gradients",
     "Stepping with scaled gradients skips the unscale and the inf/NaN check.", true, false},
    {"DL209", "scaler-with-bfloat16", Severity::Note,
     "Gradient scaler with BFloat16 autocast or parameters",
     "BFloat16 has Float's range and needs no loss scaling; on CUDA BFloat16 gradients fail inside the "
     "unscale kernel.",
     true, false},
    {"DL210", "double-update", Severity::Error,
     "Second scaler.update() in one iteration",
     "A second update(), or update() with no step() since the last one: 'No inf checks were recorded prior "
     "to update.'",
     true, true},
    {"DL301", "nonfinite-gradients", Severity::Warning,
     "inf/NaN gradients persist",
     "inf/NaN in gradients beyond what a dynamic scaler absorbs, or with no scaler at all.", false, true},
    {"DL302", "fp16-overflow-cast", Severity::Warning,
     "Cast to Half of values beyond +-65504",
     "A cast to Half (explicit or by autocast) of values that become inf.", false, true},
    {"DL303", "fp16-gradient-underflow", Severity::Warning,
     "Gradients flush to zero in Half",
     "The share of nonzero gradient values that flush to zero or become subnormal in Half is above the "
     "threshold: the loss scale is too small.",
     false, true},
    {"DL304", "fp16-optimizer-epsilon", Severity::Warning,
     "Optimizer epsilon is zero or subnormal in the parameters' dtype",
     "Adam/AdamW eps (default 1e-8) on Half parameters rounds to 0.", true, false},
    {"DL305", "precision-profile", Severity::Note,
     "GEMM work by dtype and compute type",
     "A report, not a defect: the share of matmul FLOPs per dtype.", false, true},
}};

}  // namespace

std::string_view name(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "warning";
}

RuleRange ruleCatalog() { return RuleRange{kRules.data(), kRules.size()}; }

const RuleInfo* findRule(std::string_view id) {
  for (const RuleInfo& r : ruleCatalog())
    if (r.id == id) return &r;
  return nullptr;
}

std::string qualifiedName(const RuleInfo& rule) {
  return std::string(rule.id) + "-" + std::string(rule.name);
}

std::string docsPath(const RuleInfo& rule) { return "docs/rules/" + std::string(rule.id) + ".md"; }

}  // namespace dtype_lint
