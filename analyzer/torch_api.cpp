#include "torch_api.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"

namespace dtype_lint::analyzer {

using namespace clang;

bool isStdMove(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  return call->getNumArgs() == 1 && callee && callee->getDeclName().isIdentifier() && callee->getName() == "move" &&
         callee->isInStdNamespace();
}

const Expr* ignoreWrappers(const Expr* e) {
  while (e) {
    const Expr* next = e->IgnoreParenImpCasts();
    if (auto* m = dyn_cast<MaterializeTemporaryExpr>(next)) next = m->getSubExpr();
    if (auto* b = dyn_cast<CXXBindTemporaryExpr>(next)) next = b->getSubExpr();
    if (auto* c = dyn_cast<ExprWithCleanups>(next)) next = c->getSubExpr();
    if (auto* f = dyn_cast<CXXFunctionalCastExpr>(next)) next = f->getSubExpr();
    if (auto* move = dyn_cast<CallExpr>(next); move && isStdMove(move)) next = move->getArg(0);
    if (auto* c = dyn_cast<CXXConstructExpr>(next);
        c && c->getNumArgs() >= 1 && c->getConstructor()->isCopyOrMoveConstructor())
      next = c->getArg(0);
    if (next == e) return e;
    e = next;
  }
  return e;
}

namespace {

const CXXRecordDecl* recordOf(QualType type) {
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto* ptr = type->getAs<PointerType>()) type = ptr->getPointeeType().getCanonicalType();
  return type->getAsCXXRecordDecl();
}

bool hasQualifiedName(const NamedDecl* d, llvm::StringRef name) { return d && d->getQualifiedNameAsString() == name; }

bool derivesFrom(const CXXRecordDecl* record, llvm::StringRef baseName) {
  if (!record || !record->hasDefinition()) return false;
  record = record->getDefinition();
  if (hasQualifiedName(record, baseName)) return true;
  for (const CXXBaseSpecifier& base : record->bases())
    if (derivesFrom(base.getType()->getAsCXXRecordDecl(), baseName)) return true;
  return false;
}

const TemplateArgumentList* templateArgs(const CXXRecordDecl* record) {
  if (auto* spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(record)) return &spec->getTemplateArgs();
  return nullptr;
}

bool isNamespace(const DeclContext* ctx, llvm::StringRef name) {
  const auto* ns = dyn_cast_or_null<NamespaceDecl>(ctx);
  return ns && ns->getName() == name;
}

}  // namespace

bool isTensorType(QualType type) {
  const CXXRecordDecl* r = recordOf(type);
  return r && (hasQualifiedName(r, "at::Tensor") || hasQualifiedName(r, "at::TensorBase"));
}

namespace {

// Whether the template argument at `position` of a specialization is a tensor.
bool tensorArgumentAt(const CXXRecordDecl* record, unsigned position) {
  const TemplateArgumentList* args = templateArgs(record);
  return args && args->size() > position && (*args)[position].getKind() == TemplateArgument::Type &&
         isTensorType((*args)[position].getAsType());
}

}  // namespace

bool isTensorListType(QualType type) {
  const CXXRecordDecl* r = recordOf(type);
  if (!r) return false;
  const std::string name = r->getQualifiedNameAsString();
  if (name == "std::vector" || name == "c10::ArrayRef" || name == "std::initializer_list" || name == "std::array" ||
      name == "std::deque" || name == "std::list" || name == "c10::IListRef")
    return tensorArgumentAt(r, 0);
  if (name == "std::map" || name == "std::unordered_map" || name == "torch::OrderedDict") return tensorArgumentAt(r, 1);
  return false;
}

bool isTensorKeyValueType(QualType type) {
  const CXXRecordDecl* r = recordOf(type);
  if (!r) return false;
  if (hasQualifiedName(r, "std::pair")) return tensorArgumentAt(r, 1);
  // torch::OrderedDict<std::string, at::Tensor>::Item
  const auto* dict = dyn_cast<CXXRecordDecl>(r->getDeclContext());
  return r->getName() == "Item" && dict && hasQualifiedName(dict, "torch::OrderedDict") && tensorArgumentAt(dict, 1);
}

bool isScalarTypeType(QualType type) {
  type = type.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (const auto* e = type->getAs<EnumType>()) return hasQualifiedName(e->getDecl(), "c10::ScalarType");
  const CXXRecordDecl* r = recordOf(type);
  if (!r) return false;
  if (hasQualifiedName(r, "caffe2::TypeMeta")) return true;
  const std::string name = r->getQualifiedNameAsString();
  if (name == "c10::optional" || name == "std::optional") {
    const TemplateArgumentList* args = templateArgs(r);
    return args && args->size() == 1 && (*args)[0].getKind() == TemplateArgument::Type &&
           isScalarTypeType((*args)[0].getAsType());
  }
  return false;
}

std::optional<EqualityTest> equalityTest(const Expr* e) {
  if (const auto* op = dyn_cast<BinaryOperator>(e); op && op->isEqualityOp())
    return EqualityTest{op->getLHS(), op->getRHS(), op->getOpcode() == BO_EQ};
  if (const auto* call = dyn_cast<CXXOperatorCallExpr>(e);
      call && call->getNumArgs() == 2 &&
      (call->getOperator() == OO_EqualEqual || call->getOperator() == OO_ExclaimEqual))
    return EqualityTest{call->getArg(0), call->getArg(1), call->getOperator() == OO_EqualEqual};
  if (const auto* rewritten = dyn_cast<CXXRewrittenBinaryOperator>(e)) {
    const auto form = rewritten->getDecomposedForm();
    if (form.Opcode == BO_EQ || form.Opcode == BO_NE) return EqualityTest{form.LHS, form.RHS, form.Opcode == BO_EQ};
  }
  return std::nullopt;
}

std::optional<EqualityTest> dtypeComparison(const Expr* e) {
  const auto comparison = equalityTest(e);
  if (comparison && isScalarTypeType(comparison->lhs->getType()) && isScalarTypeType(comparison->rhs->getType()))
    return comparison;
  return std::nullopt;
}

bool isTensorOptionsType(QualType type) { return hasQualifiedName(recordOf(type), "c10::TensorOptions"); }

const CXXRecordDecl* moduleImplClass(QualType type) {
  const CXXRecordDecl* r = recordOf(type);
  if (!r) return nullptr;
  // shared_ptr<Impl>, ModuleHolder<Impl>, and holders such as Linear or
  // TORCH_MODULE(Net) that derive from ModuleHolder<Impl>.
  auto firstTypeArgument = [](const CXXRecordDecl* holder) -> const CXXRecordDecl* {
    const TemplateArgumentList* args = templateArgs(holder);
    if (!args || args->size() < 1 || (*args)[0].getKind() != TemplateArgument::Type) return nullptr;
    return moduleImplClass((*args)[0].getAsType());
  };
  const std::string name = r->getQualifiedNameAsString();
  if (name == "torch::nn::ModuleHolder" || name == "std::shared_ptr") return firstTypeArgument(r);
  if (r->hasDefinition())
    for (const CXXBaseSpecifier& base : r->getDefinition()->bases())
      if (const CXXRecordDecl* b = base.getType()->getAsCXXRecordDecl();
          b && b->getQualifiedNameAsString() == "torch::nn::ModuleHolder")
        return firstTypeArgument(b);
  return derivesFrom(r, "torch::nn::Module") ? r->getDefinition() : nullptr;
}

std::string builtinModuleOp(const CXXRecordDecl* impl) {
  if (!impl || !isNamespace(impl->getDeclContext(), "nn")) return "";
  const llvm::StringRef name = impl->getName();
  struct Entry {
    llvm::StringRef impl, op;
  };
  static constexpr Entry kOps[] = {
      {"LinearImpl", "linear"},
      {"Conv1dImpl", "conv1d"},
      {"Conv2dImpl", "conv2d"},
      {"Conv3dImpl", "conv3d"},
      {"ConvTranspose1dImpl", "conv_transpose1d"},
      {"ConvTranspose2dImpl", "conv_transpose2d"},
      {"ConvTranspose3dImpl", "conv_transpose3d"},
      {"BilinearImpl", "bilinear"},
      {"SequentialImpl", "linear"},
      // Recurrent layers: their gates are GEMMs of the input with their weights.
      {"LSTMImpl", "lstm"},
      {"GRUImpl", "gru"},
      {"RNNImpl", "rnn"},
      // Modules that keep their input's dtype.
      {"DropoutImpl", "dropout"},
      {"ReLUImpl", "relu"},
      {"GELUImpl", "gelu"},
      {"SiLUImpl", "silu"},
      {"TanhImpl", "tanh"},
      {"SigmoidImpl", "sigmoid"},
      {"LeakyReLUImpl", "leaky_relu"},
      {"ELUImpl", "elu"},
      {"FlattenImpl", "flatten"},
      // Lookups: rows of the weight, in its dtype.
      {"EmbeddingImpl", "embedding"},
      {"EmbeddingBagImpl", "embedding_bag"},
      // Precision-sensitive modules: the op runs on their inputs.
      {"LayerNormImpl", "layer_norm"},
      {"GroupNormImpl", "group_norm"},
      {"SoftmaxImpl", "softmax"},
      {"LogSoftmaxImpl", "log_softmax"},
      {"MSELossImpl", "mse_loss"},
      {"CrossEntropyLossImpl", "cross_entropy"},
      {"NLLLossImpl", "nll_loss"},
      {"L1LossImpl", "l1_loss"},
      {"SmoothL1LossImpl", "smooth_l1_loss"},
      {"HuberLossImpl", "huber_loss"},
      {"KLDivLossImpl", "kl_div"},
      {"BCEWithLogitsLossImpl", "binary_cross_entropy_with_logits"},
      {"BCELossImpl", "binary_cross_entropy"},
  };
  for (const Entry& e : kOps)
    if (name == e.impl) return e.op.str();
  return "";
}

bool isUserModule(const CXXRecordDecl* impl) {
  return impl && !isNamespace(impl->getDeclContext(), "nn") && derivesFrom(impl, "torch::nn::Module");
}

bool registersTensor(llvm::StringRef name) { return name == "register_parameter" || name == "register_buffer"; }

bool isOptimizerType(QualType type) {
  const CXXRecordDecl* r = recordOf(type);
  if (r && (r->getQualifiedNameAsString() == "std::unique_ptr" || r->getQualifiedNameAsString() == "std::shared_ptr")) {
    const TemplateArgumentList* args = templateArgs(r);
    if (args && args->size() >= 1 && (*args)[0].getKind() == TemplateArgument::Type)
      return isOptimizerType((*args)[0].getAsType());
  }
  return derivesFrom(r, "torch::optim::Optimizer");
}

bool isCustomAutogradFunction(const CXXRecordDecl* record) {
  if (!record || !record->hasDefinition()) return false;
  for (const CXXBaseSpecifier& base : record->getDefinition()->bases())
    if (hasQualifiedName(base.getType()->getAsCXXRecordDecl(), "torch::autograd::Function")) return true;
  return false;
}

bool isTorchFunction(const FunctionDecl* fn) {
  if (!fn) return false;
  const DeclContext* ctx = fn->getDeclContext();
  const DeclContext* outermost = nullptr;
  for (; ctx && !ctx->isTranslationUnit(); ctx = ctx->getParent())
    if (isa<NamespaceDecl>(ctx)) outermost = ctx;
  return isNamespace(outermost, "at") || isNamespace(outermost, "torch") || isNamespace(outermost, "c10");
}

std::string atenOpName(const FunctionDecl* fn) {
  if (!fn || !fn->getDeclName().isIdentifier()) return "";
  const std::string name = fn->getName().str();
  const auto* ns = dyn_cast<NamespaceDecl>(fn->getDeclContext());
  if (ns && isNamespace(ns->getParent(), "torch") &&
      (ns->getName() == "linalg" || ns->getName() == "fft" || ns->getName() == "special"))
    return ns->getName().str() + "_" + name;
  return name;
}

bool isAutocastFunction(const FunctionDecl* fn) {
  return fn && isNamespace(fn->getDeclContext(), "autocast") && isNamespace(fn->getDeclContext()->getParent(), "at");
}

bool isAnnotation(const FunctionDecl* fn) {
  return fn && isNamespace(fn->getDeclContext(), "annotate") &&
         isNamespace(fn->getDeclContext()->getParent(), "dtype_lint");
}

namespace {

const NamedDecl* lookupIn(const DeclContext* scope, StringRef name) {
  if (!scope) return nullptr;
  const auto found = scope->lookup(&cast<Decl>(scope)->getASTContext().Idents.get(name));
  return found.empty() ? nullptr : found.front();
}

}  // namespace

// One declaration, so that a configuration of the runtime flags never pairs
// a CUDA device with a machine that has none.
const ValueDecl* cudaAvailability(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  if (!callee || !callee->getDeclName().isIdentifier()) return nullptr;
  if (callee->getName() == "is_available" && hasQualifiedName(callee, "torch::cuda::is_available"))
    return callee->getCanonicalDecl();
  if (callee->getName() != "is_cuda" || !isa<CXXMemberCallExpr>(call)) return nullptr;
  const DeclContext* torch =
      dyn_cast_or_null<NamespaceDecl>(lookupIn(callee->getASTContext().getTranslationUnitDecl(), "torch"));
  const DeclContext* cuda = dyn_cast_or_null<NamespaceDecl>(lookupIn(torch, "cuda"));
  if (const auto* available = dyn_cast_or_null<FunctionDecl>(lookupIn(cuda, "is_available")))
    return available->getCanonicalDecl();
  return callee->getCanonicalDecl();
}

namespace {
template <typename Predicate>
bool callsAny(const Stmt* s, const Predicate& matches) {
  if (!s) return false;
  if (const auto* call = dyn_cast<CallExpr>(s))
    if (const FunctionDecl* callee = call->getDirectCallee(); callee && matches(callee)) return true;
  for (const Stmt* child : s->children())
    if (callsAny(child, matches)) return true;
  return false;
}

bool bodyCallsAny(const FunctionDecl* fn, bool (*matches)(const FunctionDecl*)) {
  const FunctionDecl* definition = fn ? fn->getDefinition() : nullptr;
  return definition && callsAny(definition->getBody(), matches);
}
}  // namespace

bool announcesScale(const FunctionDecl* method) {
  return bodyCallsAny(method,
                      [](const FunctionDecl* callee) { return isAnnotation(callee) && callee->getName() == "scale"; });
}

namespace {
// Itself, or through the user helpers it calls (`if (!grads_are_finite())`), two calls deep.
bool checksForNonFiniteWithin(const FunctionDecl* fn, int depth, llvm::function_ref<bool(const FunctionDecl*)> skip) {
  const FunctionDecl* definition = fn ? fn->getDefinition() : nullptr;
  return definition && callsAny(definition->getBody(), [depth, skip](const FunctionDecl* callee) {
           const IdentifierInfo* id = callee->getIdentifier();
           if (isUserCode(callee->getLocation(), callee->getASTContext().getSourceManager()))
             return depth > 0 && !skip(callee) && checksForNonFiniteWithin(callee, depth - 1, skip);
           if (!id) return false;
           const llvm::StringRef name = id->getName();
           return name == "isfinite" || name == "isinf" || name == "isnan" || name == "isposinf" ||
                  name == "isneginf" || name == kRawUnscaleOp;
         });
}
}  // namespace

bool checksForNonFinite(const FunctionDecl* fn, llvm::function_ref<bool(const FunctionDecl*)> skip) {
  return checksForNonFiniteWithin(fn, 2, skip);
}

std::optional<ScalarType> evaluateScalarTypeConstant(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e) return std::nullopt;
  // A template's dtype parameter in an instantiation (`template <c10::ScalarType kCompute>`):
  // its value, an integer cast to the enum.
  if (const auto* enumType = e->getType()->getAs<EnumType>(); enumType && isa<CastExpr>(e)) {
    const Expr* value = e->IgnoreCasts();
    std::optional<uint64_t> number;
    if (const auto* literal = dyn_cast<IntegerLiteral>(value)) number = literal->getValue().getZExtValue();
    if (const auto* literal = dyn_cast<CharacterLiteral>(value)) number = literal->getValue();
    if (!number || !hasQualifiedName(enumType->getDecl(), "c10::ScalarType")) return std::nullopt;
    for (const EnumConstantDecl* enumerator : enumType->getDecl()->enumerators())
      if (enumerator->getInitVal().getZExtValue() == *number) return scalarTypeFromName(enumerator->getName());
    return std::nullopt;
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
    if (const auto* enumerator = dyn_cast<EnumConstantDecl>(ref->getDecl())) {
      if (hasQualifiedName(dyn_cast<EnumDecl>(enumerator->getDeclContext()), "c10::ScalarType"))
        return scalarTypeFromName(enumerator->getName());
      return std::nullopt;
    }
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->getType().isConstQualified() && var->getInit())
      return evaluateScalarTypeConstant(var->getInit());
  }
  return std::nullopt;
}

std::optional<std::string> evaluateDeviceTypeConstant(const Expr* e) {
  e = ignoreWrappers(e);
  const auto* ref = e ? dyn_cast<DeclRefExpr>(e) : nullptr;
  if (!ref) return std::nullopt;
  if (const auto* enumerator = dyn_cast<EnumConstantDecl>(ref->getDecl())) {
    if (!hasQualifiedName(dyn_cast<EnumDecl>(enumerator->getDeclContext()), "c10::DeviceType")) return std::nullopt;
    return enumerator->getName().str();
  }
  if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->getInit())
    return evaluateDeviceTypeConstant(var->getInit());
  return std::nullopt;
}

bool isLibTorchPath(llvm::StringRef path) {
  for (llvm::StringRef marker : {"/ATen/", "/c10/", "/torch/csrc/", "/caffe2/", "/torch/include/"})
    if (path.contains(marker)) return true;
  return false;
}

bool isUserCode(SourceLocation loc, const SourceManager& sm) {
  if (loc.isInvalid()) return false;
  loc = sm.getExpansionLoc(loc);
  if (sm.isInSystemHeader(loc)) return false;
  if (sm.isInMainFile(loc)) return true;
  const FileEntry* file = sm.getFileEntryForID(sm.getFileID(loc));
  return file && !isLibTorchPath(file->getName());
}

}  // namespace dtype_lint::analyzer
