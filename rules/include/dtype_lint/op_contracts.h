// Op contracts as data: which ATen ops form the matmul family, which are
// precision-sensitive, how autocast treats each op per device and LibTorch
// version, and what factory functions produce.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dtype_lint/dtype.h"

namespace dtype_lint {

struct TorchVersion {
  int major = 1;
  int minor = 13;
  bool atLeast(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};

enum class Device { CPU, CUDA };

// What autocast does to an op's floating inputs (aten/src/ATen/autocast_mode.cpp).
enum class AutocastPolicy {
  None,  // not in any list: inputs reach the op unchanged
  LowerPrecision,  // cast to the autocast dtype
  Fp32,  // cast to Float
  Promote,  // cast to the widest input dtype
};

AutocastPolicy autocastPolicy(std::string_view op, Device device, TorchVersion version);

// mm, matmul, bmm, addmm, baddbmm, addmv, mv, dot, linear, conv*, einsum, ...
bool isMatmulFamily(std::string_view op);
// softmax, log_softmax, layer_norm, sum, mean, exp, pow, norm, the losses, ...
bool isPrecisionSensitive(std::string_view op);
// A loss function: its result is a scalar (the default reduction).
bool isLoss(std::string_view op);
// add, sub, mul, div, addcmul, addcdiv, lerp: out= computes in the inputs'
// dtype and only then casts into the destination (a wider one gains nothing).
bool computesInInputDtype(std::string_view op);
// In-place ops that copy or add their source into self only when the dtypes
// are equal (index_add_, index_copy_, scatter_, index_put_): any other source
// raises ("self (Float) and source (Half) must have the same scalar type").
bool copiesSourceExactly(std::string_view op);
// sum and mean: only a reduction over all dims is flagged statically.
bool needsFullReductionToBeSensitive(std::string_view op);

// "mm" for "mm_out"; nullopt for an op that is not an out= variant.
std::optional<std::string_view> outVariantBase(std::string_view op);
// "mul" for "mul_"; nullopt for an op that is not in place.
std::optional<std::string_view> inPlaceBase(std::string_view op);

// Factory functions (randn, zeros, ...) and what they produce without a dtype.
enum class FactoryKind {
  NotFactory,
  DefaultFloat,  // randn, zeros, ones, empty, rand, eye, linspace, ...: the default dtype, Float
  Long,  // randint, randperm
  Like,  // *_like: the dtype of the first argument
};
FactoryKind factoryKind(std::string_view fn);

// Ops whose result keeps the dtype of self (unary elementwise, views, copies).
bool preservesDtype(std::string_view op);
// Ops whose result is Bool (comparisons, isnan, ...).
bool returnsBool(std::string_view op);
// Ops whose result is Long (argmax, argsort, nonzero, ...).
bool returnsLong(std::string_view op);
// Binary ops whose result is the promotion of their tensor operands.
bool promotesOperands(std::string_view op);
// Losses against class indices (nll_loss, cross_entropy, ctc_loss, ...): the
// result has the input's dtype, whatever the targets' is.
bool takesClassIndices(std::string_view op);
// Lookups whose rows have the dtype of their floating operand, the table,
// wherever it is in the arguments (ATen's embedding(weight, indices), the
// functional embedding(indices, weight)); an EmbeddingBag sums rows of its weight's dtype.
bool isTableLookup(std::string_view op);

}  // namespace dtype_lint
