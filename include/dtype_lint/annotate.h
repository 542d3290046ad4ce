// Announcements a hand-written gradient scaler makes, so that dtype-lint can
// follow the scaler protocol (DL201, DL202, DL204, DL206, DL207, DL210) in
// code it cannot recognize by name, statically and at runtime:
//
//   torch::Tensor MyScaler::scale(const torch::Tensor& loss) {
//     auto scaled = loss * scale_;
//     dtype_lint::annotate::scale(this, scaled);
//     return scaled;
//   }
//   void MyScaler::unscale_(torch::optim::Optimizer& opt) {
//     dtype_lint::annotate::unscale(this, &opt);
//     ...
//   }
//
// A scaler that announces step() announces scale() too: under the hooks, a
// backward() on a loss no scale() announced is an unscaled backward (DL207).
// step() announces itself before it unscales implicitly, and that implicit
// unscale is not announced again (PyTorch's step() does the same).
//
// Header-only, no dependencies (the tensor and optimizer types are template
// parameters). Without the runtime hooks each call is one test of a null weak
// symbol; under `dtype-lint run` the preload library defines them.
#pragma once

#include <string_view>
#include <type_traits>
#include <utility>

extern "C" {
void dtype_lint_annotate_scaler(int event, const void* scaler, const void* optimizer) __attribute__((weak));
// The dtype of an optimizer's parameters ("Half" if any is Half), by name.
void dtype_lint_annotate_parameters(const void* optimizer, const char* dtype) __attribute__((weak));
// A loss the scaler scaled, by the identity of its tensor (its TensorImpl).
void dtype_lint_annotate_scaled_loss(const void* scaler, const void* loss) __attribute__((weak));
}

namespace dtype_lint::annotate {

enum ScalerEvent : int { kUnscale = 1, kStep = 2, kUpdate = 3 };

namespace detail {

template <class T, class = void>
struct HasParamGroups : std::false_type {};
template <class T>
struct HasParamGroups<T, std::void_t<decltype(std::declval<T&>().param_groups())>> : std::true_type {};

// Half if any parameter is Half (PyTorch refuses to unscale any FP16
// gradient), else BFloat16 if any is, else the first parameter's dtype.
template <class Optimizer>
void announceParameters(Optimizer* optimizer) {
  if constexpr (HasParamGroups<Optimizer>::value) {
    if (!dtype_lint_annotate_parameters) return;
    const char* dtype = nullptr;
    for (auto& group : optimizer->param_groups())
      for (auto& param : group.params()) {
        const char* name = toString(param.scalar_type());  // c10::toString, found by ADL
        const std::string_view view(name);
        if (view == "Half") return dtype_lint_annotate_parameters(optimizer, name);
        if (!dtype || view == "BFloat16") dtype = name;
      }
    if (dtype) dtype_lint_annotate_parameters(optimizer, dtype);
  }
}

}  // namespace detail

template <class Tensor>
inline void scale(const void* scaler, const Tensor& scaledLoss) {
  if (dtype_lint_annotate_scaled_loss) dtype_lint_annotate_scaled_loss(scaler, scaledLoss.unsafeGetTensorImpl());
}
template <class Optimizer>
inline void unscale(const void* scaler, Optimizer* optimizer) {
  if (!dtype_lint_annotate_scaler) return;
  detail::announceParameters(optimizer);
  dtype_lint_annotate_scaler(kUnscale, scaler, optimizer);
}
template <class Optimizer>
inline void step(const void* scaler, Optimizer* optimizer) {
  if (!dtype_lint_annotate_scaler) return;
  detail::announceParameters(optimizer);
  dtype_lint_annotate_scaler(kStep, scaler, optimizer);
}
inline void update(const void* scaler) {
  if (dtype_lint_annotate_scaler) dtype_lint_annotate_scaler(kUpdate, scaler, nullptr);
}

}  // namespace dtype_lint::annotate
