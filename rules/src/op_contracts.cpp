#include "dtype_lint/op_contracts.h"

#include <algorithm>
#include <iterator>

namespace dtype_lint {
namespace {

template <size_t N>
bool in(const std::string_view (&names)[N], std::string_view op) {
  return std::find(std::begin(names), std::end(names), op) != std::end(names);
}

// The tables are laid out by hand.
// clang-format off
// Autocast cast lists, by device, for LibTorch 1.13 (aten/src/ATen/autocast_mode.cpp).
// Ops added in 2.x are in the k*Since2 lists.
constexpr std::string_view kCudaLowerPrecision[] = {
    "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cudnn_convolution", "cudnn_convolution_transpose", "prelu",
    "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linear", "addbmm", "baddbmm", "bmm",
    "chain_matmul", "linalg_multi_dot", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"};
constexpr std::string_view kCudaLowerPrecisionSince2[] = {"scaled_dot_product_attention",
                                                          "_scaled_dot_product_flash_attention"};
constexpr std::string_view kCudaFp32[] = {
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm", "group_norm", "frobenius_norm",
    "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm",
    "logsumexp", "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm",
    "linalg_matrix_norm", "sum", "norm",
    // cross_entropy decomposes into log_softmax and nll_loss, both on the fp32 list.
    "cross_entropy", "cross_entropy_loss"};
constexpr std::string_view kCudaPromote[] = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler",
                                "index_put", "scatter_add", "tensordot"};

// einsum is not on CPU autocast's list, but the bmm it contracts with is:
// its operands are cast all the same.
constexpr std::string_view kCpuLowerPrecision[] = {
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear", "_convolution",
    "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "prelu", "einsum"};
constexpr std::string_view kCpuLowerPrecisionSince2[] = {"linalg_vecdot", "scaled_dot_product_attention",
                                            "_native_multi_head_attention"};
constexpr std::string_view kCpuFp32[] = {
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile", "nanquantile", "stft",
    "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse",
    "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d",
    "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss",
    "cross_entropy", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div", "multilabel_margin_loss",
    "binary_cross_entropy_with_logits", "linalg_vector_norm", "linalg_matrix_norm"};
constexpr std::string_view kCpuPromote[] = {"stack", "cat", "index_copy"};

constexpr std::string_view kMatmulFamily[] = {"mm",     "matmul",  "bmm",    "addmm",  "baddbmm", "addbmm", "addmv",
                                 "mv",     "dot",     "vdot",   "linear", "conv1d",  "conv2d", "conv3d",
                                 "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "einsum",
                                 "bilinear", "addr", "chain_matmul", "tensordot", "inner", "module_call"};

constexpr std::string_view kPrecisionSensitive[] = {
    "softmax", "log_softmax", "layer_norm", "sum", "mean", "exp", "pow", "norm", "logsumexp",
    "cumsum", "cumprod", "prod", "var", "std", "mse_loss", "cross_entropy", "cross_entropy_loss", "nll_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "frobenius_norm", "linalg_vector_norm", "ctc_loss", "nll_loss2d",
    "poisson_nll_loss", "soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss"};

constexpr std::string_view kComputedInInputDtype[] = {"add", "sub", "mul", "div", "addcmul", "addcdiv", "lerp"};

constexpr std::string_view kDefaultFloatFactories[] = {"randn", "rand", "zeros", "ones", "empty", "eye", "linspace",
                                          "logspace", "normal", "empty_strided", "full"};
constexpr std::string_view kLongFactories[] = {"randint", "randperm"};
constexpr std::string_view kLikeFactories[] = {"randn_like", "rand_like", "zeros_like", "ones_like", "empty_like",
                                  "full_like", "randint_like"};

constexpr std::string_view kDtypePreserving[] = {
    "clone", "detach", "contiguous", "t", "transpose", "permute", "view", "reshape", "flatten", "unsqueeze",
    "squeeze", "expand", "expand_as", "narrow", "slice", "select", "index_select", "repeat", "flip", "roll",
    "relu", "gelu", "silu", "sigmoid", "tanh", "abs", "neg", "sqrt", "rsqrt", "exp", "log", "sin", "cos",
    "square", "clamp", "clamp_min", "clamp_max", "dropout", "cpu", "cuda", "grad", "data",
    "softmax", "log_softmax", "layer_norm", "pow", "norm", "logsumexp", "cumsum", "cumprod", "var", "std",
    "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "leaky_relu", "elu", "sign",
    "reciprocal", "masked_fill", "tril", "triu", "pad", "requires_grad_", "set_requires_grad",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "sum", "mean", "prod", "amax", "amin",
    "diagonal", "diag", "movedim", "as_strided", "unfold", "index", "gather", "zero_",
    "fill_", "uniform_", "normal_", "floor", "ceil", "round", "trunc", "frac", "erf", "sign",
    "inverse", "linalg_inv", "cholesky", "linalg_cholesky", "pinverse", "linalg_pinv", "matrix_exp",
    "linalg_matrix_exp", "matrix_power", "linalg_matrix_power", "normalize", "interpolate", "batch_norm",
    "group_norm", "instance_norm", "hardtanh", "softplus", "mish", "glu", "logsigmoid", "log_sigmoid", "selu",
    "celu", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "max_pool3d", "avg_pool3d", "adaptive_max_pool2d",
    "pixel_shuffle", "pixel_unshuffle", "poisson", "bernoulli", "log1p", "expm1", "log2", "log10", "exp2",
    "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erfc", "erfinv", "lgamma",
    "digamma", "logit", "sinc", "nan_to_num", "clip", "hardswish", "hardsigmoid", "relu6", "softsign",
    "tanhshrink", "threshold", "softmin", "alpha_dropout", "feature_dropout", "swapaxes", "swapdims",
    "view_as", "reshape_as", "broadcast_to", "tile", "rot90", "fliplr", "flipud", "nansum", "nanmean",
    "logcumsumexp", "renorm", "adaptive_avg_pool3d", "adaptive_max_pool1d", "channel_shuffle"};
constexpr std::string_view kBoolResult[] = {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
                                            "logical_not", "logical_and", "logical_or", "isclose"};
constexpr std::string_view kLongResult[] = {"argmax", "argmin", "argsort", "nonzero", "bucketize", "searchsorted"};
constexpr std::string_view kPromoting[] = {"add", "sub", "mul", "div", "maximum", "minimum", "where", "cat", "stack",
                              "addcmul", "addcdiv", "lerp", "hypot", "atan2", "fmod", "remainder", "outer", "ger",
                              "kron", "cross", "linalg_cross", "copysign", "logaddexp", "logaddexp2", "fmax", "fmin",
    "linalg_solve", "linalg_solve_triangular", "cholesky_solve"};

// clang-format on
}  // namespace

AutocastPolicy autocastPolicy(std::string_view op, Device device, TorchVersion version) {
  const bool v2 = version.atLeast(2, 0);
  if (device == Device::CUDA) {
    if (in(kCudaLowerPrecision, op) || (v2 && in(kCudaLowerPrecisionSince2, op))) return AutocastPolicy::LowerPrecision;
    if (in(kCudaFp32, op)) return AutocastPolicy::Fp32;
    if (in(kCudaPromote, op)) return AutocastPolicy::Promote;
    return AutocastPolicy::None;
  }
  if (in(kCpuLowerPrecision, op) || (v2 && in(kCpuLowerPrecisionSince2, op))) return AutocastPolicy::LowerPrecision;
  if (in(kCpuFp32, op)) return AutocastPolicy::Fp32;
  if (in(kCpuPromote, op)) return AutocastPolicy::Promote;
  return AutocastPolicy::None;
}

bool isMatmulFamily(std::string_view op) { return in(kMatmulFamily, op); }
bool isPrecisionSensitive(std::string_view op) { return in(kPrecisionSensitive, op); }
bool isLoss(std::string_view op) {
  return (op.size() > 5 && op.substr(op.size() - 5) == "_loss") || op == "cross_entropy" || op == "kl_div" ||
         op == "binary_cross_entropy" || op == "binary_cross_entropy_with_logits";
}
bool computesInInputDtype(std::string_view op) { return in(kComputedInInputDtype, op); }
bool copiesSourceExactly(std::string_view op) {
  constexpr std::string_view kExactSource[] = {"index_add",   "index_copy",     "index_put",      "scatter",
                                               "scatter_add", "scatter_reduce", "masked_scatter", "index_reduce"};
  return in(kExactSource, op);
}
bool needsFullReductionToBeSensitive(std::string_view op) { return op == "sum" || op == "mean"; }

std::optional<std::string_view> outVariantBase(std::string_view op) {
  constexpr std::string_view kSuffix = "_out";
  if (op.size() > kSuffix.size() && op.substr(op.size() - kSuffix.size()) == kSuffix)
    return op.substr(0, op.size() - kSuffix.size());
  return std::nullopt;
}

std::optional<std::string_view> inPlaceBase(std::string_view op) {
  if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') return op.substr(0, op.size() - 1);
  return std::nullopt;
}

FactoryKind factoryKind(std::string_view fn) {
  if (in(kDefaultFloatFactories, fn)) return FactoryKind::DefaultFloat;
  if (in(kLongFactories, fn)) return FactoryKind::Long;
  if (in(kLikeFactories, fn)) return FactoryKind::Like;
  return FactoryKind::NotFactory;
}

bool preservesDtype(std::string_view op) { return in(kDtypePreserving, op); }
bool returnsBool(std::string_view op) { return in(kBoolResult, op); }
bool returnsLong(std::string_view op) { return in(kLongResult, op); }
bool promotesOperands(std::string_view op) { return in(kPromoting, op); }
bool isTableLookup(std::string_view op) { return op == "embedding" || op == "embedding_bag"; }
bool takesClassIndices(std::string_view op) {
  return op == "nll_loss" || op == "cross_entropy" || op == "ctc_loss" || op == "multi_margin_loss" ||
         op == "multilabel_margin_loss";
}

}  // namespace dtype_lint
