// What the dtype flow asks of Clang's AST that holds no flow state: source
// locations, the variable an expression names, numeric constants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dtype_lint/finding.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace dtype_lint::analyzer::flow {

SourceLocation toLocation(clang::SourceRange range, const clang::SourceManager& sm, const clang::LangOptions& lang);
// An expression's range where a fix can edit it: written in the file, not
// produced by a macro; unset otherwise.
std::optional<SourceLocation> editableLocation(const clang::Expr* e, const clang::ASTContext& context);
// Whether `.f()` can follow the expression as written: a name, a call, a
// member, an index or parentheses (not `a - b`).
bool isPostfixExpression(const clang::Expr* e);
// Where a function's name is.
SourceLocation nameLocation(const clang::FunctionDecl* fn);
// A function defined in user code that the flow follows.
bool isAnalyzable(const clang::FunctionDecl* fn);
// A user module's forward with a body; null when it has none.
const clang::FunctionDecl* moduleForward(const clang::CXXRecordDecl* impl);

// T for a call of T::apply(...), where T derives from torch::autograd::Function<T>.
const clang::CXXRecordDecl* autogradFunctionOfApply(const clang::CallExpr* call);
// std::unique_ptr<T>, std::shared_ptr<T>.
bool isSmartPointer(clang::QualType type);
// std::optional<T>.
bool isOptional(clang::QualType type);
// An optional's value that holds nothing: `std::nullopt`, `{}`, `optional<T>(std::nullopt)`.
bool makesEmptyOptional(const clang::Expr* e);
// The argument a callee's first parameter gets: 1 for an operator that is a
// method (a callable object's `f(x)`, `a[i]`: the object comes first), else 0.
unsigned firstParameterArgument(const clang::CallExpr* call, const clang::FunctionDecl* callee);
// A local dtype variable the code assigns after declaring it
// (`torch::Dtype dtype = torch::kFloat; if (...) dtype = torch::kHalf;`):
// followed along paths, not read from its initializer.
bool reassignableDtype(const clang::ValueDecl* d);
// std::pair or std::tuple.
bool isStdTuple(clang::QualType type);
// std::pair / std::tuple holding a tensor.
bool isTensorTupleType(clang::QualType type);
// A sequence of such pairs or tuples (`std::vector<std::pair<Tensor, Tensor>>`):
// held as one list of every tensor in every element.
bool isTensorTupleListType(clang::QualType type);
// A sequence of modules (`std::vector<torch::nn::Linear> layers;`), held as
// a list of their parameters' dtypes: the modules' class; null for other types.
const clang::CXXRecordDecl* moduleListElementClass(clang::QualType type);
// A list or a pair/tuple of tensors, a list of those, or a list of modules:
// what the flow holds as a ListFact.
bool holdsTensorElements(clang::QualType type);
// What a call of a predicate without arguments returns, when its body is one
// return statement: `cfg.half()` of `bool half() const { return precision == "fp16"; }`.
const clang::Expr* predicateBody(const clang::Expr* condition);
// The container of an element access: `v[i]`, `v.at(i)`, `v.front()`, `v.back()`.
const clang::Expr* accessedContainer(const clang::Expr* e);
// The elements a pair or tuple is made of: `{h, z}`, `std::make_pair(h, z)`, `std::tuple<...>(a, b)`.
std::optional<std::vector<const clang::Expr*>> tupleElements(const clang::Expr* e);
// The record behind a value, a pointer or a smart pointer.
const clang::CXXRecordDecl* pointeeRecord(clang::QualType type);
bool named(const std::vector<std::string>& names, llvm::StringRef name);
// The callee's name; empty for operators, constructors and indirect calls.
std::string calleeName(const clang::CallExpr* call);

// Looks through wrappers and converting constructions (double -> c10::Scalar).
const clang::Expr* ignoreConversions(const clang::Expr* e);
// A numeric constant: a literal, a constant expression, or a local initialized with one.
std::optional<double> numericConstant(const clang::Expr* e, clang::ASTContext& context);
// The variable an expression names, looking through casts and member access.
const clang::ValueDecl* referencedVariable(const clang::Expr* e);
// The variable or field an expression names (no looking through conversions).
const clang::ValueDecl* declOf(const clang::Expr* e);
// The bool variable, parameter or field a condition reads as a whole
// (`cfg.use_amp`, `half`), canonical, or whether the run has a GPU
// (`torch::cuda::is_available()`, `device.is_cuda()`: one flag); null for anything else.
const clang::ValueDecl* testedFlag(const clang::Expr* condition);
// A local std::optional whose engagement the flow follows as a bool
// (`std::optional<GradScaler> scaler; if (fp16) scaler.emplace();`), canonical.
const clang::ValueDecl* engagedOptional(const clang::Expr* optional);
// Whether `root` or a statement or expression under it satisfies `test`
// (false for a null root). Stops at the first that does.
bool containsStmt(const clang::Stmt* root, llvm::function_ref<bool(const clang::Stmt*)> test);
// The tests a condition combines with !, && and || (`!cfg.amp || half`: `cfg.amp`, `half`).
void forEachTest(const clang::Expr* condition, llvm::function_ref<void(const clang::Expr*)> visit);
// Each field of the record an initializer list builds, with the initializer
// it is given there (`Session s{net, opt, scaler}`).
void forEachFieldInit(const clang::InitListExpr* list,
                      llvm::function_ref<void(const clang::FieldDecl*, const clang::Expr*)> visit);
// The range a range-for loop variable walks (`model->parameters()` for
// `for (auto& p : model->parameters())`); null for other variables.
const clang::Expr* loopRange(const clang::VarDecl* var);
// `model->x`, `(*model).x`, `model.get()->x`: the expression naming the module.
const clang::Expr* moduleObject(const clang::Expr* e);
// The one class of the program's modules a Sequential member holds, where its
// class's constructors push nothing else into it (`blocks->push_back(Block(...))`).
const clang::CXXRecordDecl* sequentialBlockClass(const clang::FieldDecl* sequential);
// A module made here (Linear(4, 4), register_module(...), make_shared), not an
// existing one passed on.
bool createsModule(const clang::Expr* e);
// 'name', as messages name a declaration.
std::string quotedName(const clang::NamedDecl* d);
// An expression as the source spells it, on one line, quoted, cut at 48
// characters, as messages name an operand or a flag: 'cfg_.use_amp'.
std::string quotedSource(const clang::Expr* e, const clang::SourceManager& sm, const clang::LangOptions& lang);

// "key" for ctx->saved_data["key"] (a custom Function's saved data).
std::optional<std::string> savedDataKey(const clang::CXXOperatorCallExpr* subscript);

// The tensor arguments of a call from `first` on, with those of {a, b} lists.
std::vector<const clang::Expr*> tensorArgs(const clang::CallExpr* call, unsigned first = 0);

}  // namespace dtype_lint::analyzer::flow
