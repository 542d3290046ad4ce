// CPU kernels for the raw ATen AMP ops where the LibTorch has none (Debian's
// 1.13 has CUDA kernels only; >= 2.3 ships CPU ones): the ops then dispatch,
// and the hooks see them, as they do on a GPU.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>
#include <torch/torch.h>

namespace amp_cpu_kernels {

inline void unscaleOnCpu(at::TensorList gradients, at::Tensor& foundInf, const at::Tensor& invScale) {
  for (const at::Tensor& gradient : gradients) {
    if (!torch::isfinite(gradient).all().item<bool>()) foundInf.fill_(1.0);
    gradient.mul_(invScale);
  }
}

inline at::Tensor& updateScaleOnCpu(at::Tensor& scale, at::Tensor& growthTracker, const at::Tensor& foundInf,
                             double growthFactor, double backoffFactor, int64_t growthInterval) {
  if (foundInf.item<double>() > 0) {
    scale.mul_(backoffFactor);
    growthTracker.zero_();
  } else if (growthTracker.item<int64_t>() + 1 >= growthInterval) {
    scale.mul_(growthFactor);
    growthTracker.zero_();
  } else {
    growthTracker.add_(1);
  }
  return scale;
}

inline void registerCpuKernelsIfMissing() {
  const auto update = c10::Dispatcher::singleton().findSchema({"aten::_amp_update_scale_", ""});
  if (update && update->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return;
  static torch::Library cpu(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
  cpu.impl("_amp_foreach_non_finite_check_and_unscale_", TORCH_FN(unscaleOnCpu));
  cpu.impl("_amp_update_scale_", TORCH_FN(updateScaleOnCpu));
}

}  // namespace amp_cpu_kernels
