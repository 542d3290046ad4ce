// Recognizing LibTorch in Clang's AST: tensor and module types, dtype
// constants, which namespace a call belongs to. No dataflow here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dtype_lint/dtype.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

namespace dtype_lint::analyzer {

// Strips parens, implicit casts, temporaries and copy constructions.
const clang::Expr* ignoreWrappers(const clang::Expr* e);
// std::move(x): x, as far as dtypes go.
bool isStdMove(const clang::CallExpr* call);

bool isTensorType(clang::QualType type);
// A container of tensors: std::vector<at::Tensor> (variable_list),
// at::TensorList, at::ITensorListRef, std::array, a map or torch::OrderedDict
// of tensors.
bool isTensorListType(clang::QualType type);
// An element of a map of tensors: std::pair<K, Tensor>, OrderedDict's Item.
bool isTensorKeyValueType(clang::QualType type);
bool isScalarTypeType(clang::QualType type);  // c10::ScalarType, optional<ScalarType>, TypeMeta
// `a == b`, `a != b`: built in, an overloaded operator (`s == "fp16"`,
// `opt == kHalf`), or C++20's rewritten form (`!(s == "off")` behind `s != "off"`).
struct EqualityTest {
  const clang::Expr* lhs;
  const clang::Expr* rhs;
  bool isEqual;  // `==` rather than `!=`
};
std::optional<EqualityTest> equalityTest(const clang::Expr* e);
// `cfg.dtype == torch::kHalf`, `amp_dtype_ != kFloat`: an equality test of two dtypes.
std::optional<EqualityTest> dtypeComparison(const clang::Expr* e);
bool isTensorOptionsType(clang::QualType type);

// The torch::nn::Module subclass behind a module holder (Linear), a
// shared_ptr<Impl> or the Impl itself; nullptr for other types.
const clang::CXXRecordDecl* moduleImplClass(clang::QualType type);
// The ATen op a built-in module's forward runs ("linear" for LinearImpl,
// "mse_loss" for MSELossImpl), or
// empty for modules this tool does not model as one op.
std::string builtinModuleOp(const clang::CXXRecordDecl* impl);
inline bool isRecurrentLayer(std::string_view op) { return op == "lstm" || op == "gru" || op == "rnn"; }
bool isUserModule(const clang::CXXRecordDecl* impl);
// register_parameter, register_buffer: a module method that registers the tensor it is given and returns it.
bool registersTensor(llvm::StringRef name);

// A class derived from torch::optim::Optimizer, through pointers and references.
bool isOptimizerType(clang::QualType type);
// The Function<T> subclass T when `record` derives from torch::autograd::Function<T>.
bool isCustomAutogradFunction(const clang::CXXRecordDecl* record);

// at::, torch:: (including torch::nn::functional), c10::.
bool isTorchFunction(const clang::FunctionDecl* fn);
// The ATen op a LibTorch function calls: torch::linalg::inv is linalg_inv
// (likewise fft_ and special_), anything else its own name.
std::string atenOpName(const clang::FunctionDecl* fn);
// at::autocast::<name>
bool isAutocastFunction(const clang::FunctionDecl* fn);
// dtype_lint::annotate::<name> (include/dtype_lint/annotate.h)
bool isAnnotation(const clang::FunctionDecl* fn);
// `torch::cuda::is_available()`, `device.is_cuda()`, `x.is_cuda()`: whether
// the run has a GPU, as one declaration for all of them (torch::cuda::is_available
// where the unit declares it); null for any other call.
const clang::ValueDecl* cudaAvailability(const clang::CallExpr* call);
// A method of a hand-written scaler whose body announces the tensor it
// returns as a scaled loss (dtype_lint::annotate::scale).
bool announcesScale(const clang::FunctionDecl* method);
// Whether the function checks some tensor for inf/NaN (isfinite, isinf,
// isnan, ...), itself or in a user helper it calls other than those `skip`
// names (a GradScaler's own methods): hand-rolled loss scaling that does is a
// dynamic scaler.
bool checksForNonFinite(const clang::FunctionDecl* fn, llvm::function_ref<bool(const clang::FunctionDecl*)> skip);

// The raw ATen AMP ops a C++ GradScaler port calls: the unscale (an inf check) and the update.
inline constexpr llvm::StringLiteral kRawUnscaleOp = "_amp_foreach_non_finite_check_and_unscale_";
inline constexpr llvm::StringLiteral kRawUpdateScaleOp = "_amp_update_scale_";

// The value of a c10::ScalarType constant expression (torch::kHalf,
// at::ScalarType::Half, c10::kBFloat16, ...).
std::optional<ScalarType> evaluateScalarTypeConstant(const clang::Expr* e);
// "CUDA" or "CPU" for a c10::DeviceType constant (at::kCUDA, c10::DeviceType::CPU).
std::optional<std::string> evaluateDeviceTypeConstant(const clang::Expr* e);

// Headers of LibTorch itself, wherever it is installed.
bool isLibTorchPath(llvm::StringRef path);
// Code the user wrote: in the main file or a user header, not a system or LibTorch header.
bool isUserCode(clang::SourceLocation loc, const clang::SourceManager& sm);

}  // namespace dtype_lint::analyzer
