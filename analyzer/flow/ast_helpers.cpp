#include "flow/ast_helpers.h"

#include <fmt/format.h>

#include "llvm/Support/Path.h"

#include "flow/settings.h"
#include "torch_api.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

SourceLocation toLocation(SourceRange range, const SourceManager& sm, const LangOptions& lang) {
  SourceLocation out;
  clang::SourceLocation begin = sm.getExpansionLoc(range.getBegin());
  clang::SourceLocation end = sm.getExpansionLoc(range.getEnd());
  if (begin.isInvalid()) return out;
  PresumedLoc b = sm.getPresumedLoc(begin);
  if (b.isInvalid()) return out;
  // As included: "PPO/../Util/x.hpp" is reported as "Util/x.hpp".
  llvm::SmallString<256> file(b.getFilename());
  llvm::sys::path::remove_dots(file, /*remove_dot_dot=*/true);
  out.file = std::string(file);
  out.line = b.getLine();
  out.column = b.getColumn();
  PresumedLoc e = sm.getPresumedLoc(end);
  if (e.isValid() && e.getFileID() == b.getFileID()) {
    out.endLine = e.getLine();
    const unsigned length = Lexer::MeasureTokenLength(end, sm, lang);
    out.endColumn = e.getColumn() + (length > 0 ? length - 1 : 0);
  } else {
    out.endLine = out.line;
    out.endColumn = out.column;
  }
  return out;
}

std::optional<SourceLocation> editableLocation(const Expr* e, const ASTContext& context) {
  const SourceManager& sm = context.getSourceManager();
  const SourceRange range = e->getSourceRange();
  if (range.isInvalid() || range.getBegin().isMacroID() || range.getEnd().isMacroID() ||
      sm.getFileID(range.getBegin()) != sm.getFileID(range.getEnd()))
    return std::nullopt;
  return toLocation(range, sm, context.getLangOpts());
}

bool isPostfixExpression(const Expr* e) {
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e))
    return op->getOperator() == OO_Subscript || op->getOperator() == OO_Call || op->getOperator() == OO_Arrow;
  return isa<DeclRefExpr, MemberExpr, CallExpr, ParenExpr, ArraySubscriptExpr, CXXThisExpr>(e);
}

SourceLocation nameLocation(const FunctionDecl* fn) {
  const ASTContext& context = fn->getASTContext();
  return toLocation(SourceRange(fn->getLocation()), context.getSourceManager(), context.getLangOpts());
}

bool isAnalyzable(const FunctionDecl* fn) {
  return fn && fn->hasBody() && isUserCode(fn->getLocation(), fn->getASTContext().getSourceManager()) &&
         !fn->isDependentContext();
}

const FunctionDecl* moduleForward(const CXXRecordDecl* impl) {
  for (const CXXMethodDecl* method : impl->methods())
    if (method->getDeclName().isIdentifier() && method->getName() == "forward" && method->hasBody())
      return method->getDefinition();
  return nullptr;
}

const CXXRecordDecl* autogradFunctionOfApply(const CallExpr* call) {
  const auto* method = dyn_cast_or_null<CXXMethodDecl>(call->getDirectCallee());
  if (!method || !method->getDeclName().isIdentifier() || method->getName() != "apply") return nullptr;
  const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(method->getParent());
  if (!spec || spec->getQualifiedNameAsString() != "torch::autograd::Function" || spec->getTemplateArgs().size() != 1)
    return nullptr;
  return spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
}

bool isStdTuple(QualType type) {
  const auto* spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(type.getNonReferenceType()->getAsCXXRecordDecl());
  const std::string name = spec ? spec->getQualifiedNameAsString() : "";
  return name == "std::pair" || name == "std::tuple";
}

bool isTensorTupleType(QualType type) {
  if (!isStdTuple(type)) return false;
  const auto* spec = cast<ClassTemplateSpecializationDecl>(type.getNonReferenceType()->getAsCXXRecordDecl());
  for (const TemplateArgument& arg : spec->getTemplateArgs().asArray()) {
    if (arg.getKind() == TemplateArgument::Type && isTensorType(arg.getAsType())) return true;
    if (arg.getKind() == TemplateArgument::Pack)
      for (const TemplateArgument& element : arg.pack_elements())
        if (element.getKind() == TemplateArgument::Type && isTensorType(element.getAsType())) return true;
  }
  return false;
}

bool isTensorTupleListType(QualType type) {
  const auto* spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(type.getNonReferenceType()->getAsCXXRecordDecl());
  const std::string name = spec ? spec->getQualifiedNameAsString() : "";
  if (name != "std::vector" && name != "std::deque" && name != "std::list" && name != "std::array") return false;
  const TemplateArgument& element = spec->getTemplateArgs()[0];
  return element.getKind() == TemplateArgument::Type && isTensorTupleType(element.getAsType());
}

const CXXRecordDecl* moduleListElementClass(QualType type) {
  const auto* spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(type.getNonReferenceType()->getAsCXXRecordDecl());
  const std::string name = spec ? spec->getQualifiedNameAsString() : "";
  if (name != "std::vector" && name != "std::deque" && name != "std::list" && name != "std::array") return nullptr;
  const TemplateArgument& element = spec->getTemplateArgs()[0];
  return element.getKind() == TemplateArgument::Type ? moduleImplClass(element.getAsType()) : nullptr;
}

bool holdsTensorElements(QualType type) {
  return isTensorListType(type) || isTensorTupleType(type) || isTensorTupleListType(type) ||
         moduleListElementClass(type);
}

const Expr* predicateBody(const Expr* condition) {
  const auto* call = dyn_cast_or_null<CallExpr>(condition ? condition->IgnoreParenImpCasts() : nullptr);
  const FunctionDecl* callee = call && call->getNumArgs() == 0 ? call->getDirectCallee() : nullptr;
  const FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
  if (!def || !def->getReturnType()->isBooleanType() ||
      !isUserCode(def->getLocation(), def->getASTContext().getSourceManager()))
    return nullptr;
  const auto* body = dyn_cast_or_null<CompoundStmt>(def->getBody());
  const auto* ret = body && body->size() == 1 ? dyn_cast<ReturnStmt>(body->body_front()) : nullptr;
  return ret ? ret->getRetValue() : nullptr;
}

const Expr* accessedContainer(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto* subscript = dyn_cast_or_null<CXXOperatorCallExpr>(e);
      subscript && subscript->getOperator() == OO_Subscript)
    return subscript->getArg(0);
  if (const auto* access = dyn_cast_or_null<CXXMemberCallExpr>(e);
      access && named({"front", "back", "at"}, calleeName(access)))
    return access->getImplicitObjectArgument();
  return nullptr;
}

std::optional<std::vector<const Expr*>> tupleElements(const Expr* e) {
  e = ignoreWrappers(e);
  std::vector<const Expr*> elements;
  if (const auto* list = dyn_cast_or_null<InitListExpr>(e)) {
    elements.assign(list->inits().begin(), list->inits().end());
  } else if (const auto* construct = dyn_cast_or_null<CXXConstructExpr>(e);
             construct && isStdTuple(construct->getType())) {
    elements.assign(construct->arg_begin(), construct->arg_end());
  } else if (const auto* call = dyn_cast_or_null<CallExpr>(e)) {
    const std::string name = calleeName(call);
    if (name != "make_pair" && name != "make_tuple" && name != "forward_as_tuple" && name != "tie") return std::nullopt;
    elements.assign(call->arg_begin(), call->arg_end());
  }
  if (elements.empty()) return std::nullopt;
  return elements;
}

unsigned firstParameterArgument(const CallExpr* call, const FunctionDecl* callee) {
  return isa<CXXOperatorCallExpr>(call) && isa<CXXMethodDecl>(callee) ? 1 : 0;
}

bool isOptional(QualType type) {
  const auto* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  return record && record->getQualifiedNameAsString() == "std::optional";
}

bool makesEmptyOptional(const Expr* e) {
  e = ignoreWrappers(e);
  auto isNullopt = [](const Expr* x) { return x->getType().getAsString().find("nullopt_t") != std::string::npos; };
  const auto* construct = dyn_cast_or_null<CXXConstructExpr>(e);
  return e && (isNullopt(e) || (construct && construct->getNumArgs() == 0) ||
               (construct && construct->getNumArgs() == 1 && isNullopt(construct->getArg(0))));
}

bool reassignableDtype(const ValueDecl* d) {
  const auto* var = dyn_cast_or_null<VarDecl>(d);
  return var && var->hasLocalStorage() && !isa<ParmVarDecl>(var) && !var->getType().isConstQualified() &&
         !var->getType()->isReferenceType() && isScalarTypeType(var->getType());
}

bool isSmartPointer(QualType type) {
  const auto* spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(type.getNonReferenceType()->getAsCXXRecordDecl());
  const std::string name = spec ? spec->getQualifiedNameAsString() : "";
  return (name == "std::unique_ptr" || name == "std::shared_ptr") && spec->getTemplateArgs().size() >= 1;
}

const CXXRecordDecl* pointeeRecord(QualType type) {
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto* ptr = type->getAs<PointerType>()) type = ptr->getPointeeType().getCanonicalType();
  if (isSmartPointer(type))
    return pointeeRecord(
        cast<ClassTemplateSpecializationDecl>(type->getAsCXXRecordDecl())->getTemplateArgs()[0].getAsType());
  return type->getAsCXXRecordDecl();
}

bool named(const std::vector<std::string>& names, llvm::StringRef name) {
  return std::find(names.begin(), names.end(), name.str()) != names.end();
}

std::string calleeName(const CallExpr* call) {
  const FunctionDecl* fn = call->getDirectCallee();
  if (!fn || !fn->getDeclName().isIdentifier()) return "";
  return fn->getName().str();
}

const Expr* ignoreConversions(const Expr* e) {
  // A constructor of one argument, the others defaulted: `std::string(name)` is `name`'s allocator too.
  auto converts = [](const CXXConstructExpr* construct) {
    if (construct->getNumArgs() == 0) return false;
    for (unsigned i = 1; i < construct->getNumArgs(); ++i)
      if (!isa<CXXDefaultArgExpr>(construct->getArg(i))) return false;
    return true;
  };
  for (e = ignoreWrappers(e); const auto* construct = dyn_cast_or_null<CXXConstructExpr>(e);
       e = ignoreWrappers(construct->getArg(0)))
    if (!converts(construct)) break;
  return e;
}

std::optional<double> numericConstant(const Expr* e, ASTContext& context) {
  e = ignoreConversions(e);
  Expr::EvalResult result;
  if (!e->isValueDependent() && e->EvaluateAsRValue(result, context)) {
    if (result.Val.isInt()) return double(result.Val.getInt().getSExtValue());
    if (result.Val.isFloat()) return result.Val.getFloat().convertToDouble();
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e))
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->isLocalVarDecl() && var->getInit())
      return numericConstant(var->getInit(), context);
  return std::nullopt;
}

const ValueDecl* referencedVariable(const Expr* e) {
  e = ignoreConversions(e);
  if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(e)) return ref->getDecl();
  if (const auto* member = dyn_cast_or_null<MemberExpr>(e)) return member->getMemberDecl();
  return nullptr;
}

const ValueDecl* declOf(const Expr* e) {
  e = ignoreWrappers(e);
  if (!e) return nullptr;
  if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return ref->getDecl();
  if (const auto* member = dyn_cast<MemberExpr>(e)) {
    // Fields of this object, or of a module reached through a holder.
    return dyn_cast<FieldDecl>(member->getMemberDecl());
  }
  return nullptr;
}

const ValueDecl* testedFlag(const Expr* condition) {
  condition = condition->IgnoreParenImpCasts();
  if (!condition->getType()->isBooleanType()) return nullptr;
  // `if (scaler)`, `scaler.has_value()` of a std::optional: whether it holds one.
  if (const auto* member = dyn_cast<CXXMemberCallExpr>(condition);
      member && isOptional(member->getImplicitObjectArgument()->getType()) &&
      (isa<CXXConversionDecl>(member->getMethodDecl()) || calleeName(member) == "has_value"))
    return engagedOptional(member->getImplicitObjectArgument());
  if (const auto* ref = dyn_cast<DeclRefExpr>(condition))
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl())) return var->getCanonicalDecl();
  if (const auto* member = dyn_cast<MemberExpr>(condition))
    if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl())) return field->getCanonicalDecl();
  if (const auto* call = dyn_cast<CallExpr>(condition)) {
    if (const ValueDecl* keyed = KeyedSettings::of(call)) return keyed;  // cfg.flag("amp")
    return cudaAvailability(call);
  }
  return nullptr;
}

const ValueDecl* engagedOptional(const Expr* optional) {
  const auto* ref = dyn_cast<DeclRefExpr>(optional->IgnoreParenImpCasts());
  const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  return var && var->hasLocalStorage() && isOptional(var->getType()) ? var->getCanonicalDecl() : nullptr;
}

bool containsStmt(const Stmt* root, llvm::function_ref<bool(const Stmt*)> test) {
  struct Finder : RecursiveASTVisitor<Finder> {
    llvm::function_ref<bool(const Stmt*)> test;
    bool found = false;
    bool VisitStmt(Stmt* s) {
      found = test(s);
      return !found;
    }
  };
  if (!root) return false;
  Finder finder;
  finder.test = test;
  finder.TraverseStmt(const_cast<Stmt*>(root));
  return finder.found;
}

void forEachTest(const Expr* condition, llvm::function_ref<void(const Expr*)> visit) {
  condition = condition->IgnoreParenImpCasts();
  if (const auto* negation = dyn_cast<UnaryOperator>(condition); negation && negation->getOpcode() == UO_LNot)
    return forEachTest(negation->getSubExpr(), visit);
  if (const auto* logical = dyn_cast<BinaryOperator>(condition); logical && logical->isLogicalOp()) {
    forEachTest(logical->getLHS(), visit);
    return forEachTest(logical->getRHS(), visit);
  }
  visit(condition);
}

void forEachFieldInit(const InitListExpr* list, llvm::function_ref<void(const FieldDecl*, const Expr*)> visit) {
  const InitListExpr* semantic = list->isSemanticForm() ? list : list->getSemanticForm();
  const RecordDecl* record = semantic ? semantic->getType()->getAsRecordDecl() : nullptr;
  if (!record) return;
  unsigned i = 0;
  for (const FieldDecl* field : record->fields()) {
    if (i >= semantic->getNumInits()) break;
    visit(field, semantic->getInit(i++));
  }
}

// The loop variable is `*__begin`, `__begin` is `__range.begin()` (or
// `begin(__range)`), and `__range` is bound to the range.
const Expr* loopRange(const VarDecl* var) {
  if (!var->isCXXForRangeDecl() || !var->getInit()) return nullptr;
  const Expr* e = ignoreWrappers(var->getInit());
  const Expr* iterator = nullptr;
  if (const auto* deref = dyn_cast<UnaryOperator>(e); deref && deref->getOpcode() == UO_Deref)
    iterator = deref->getSubExpr();
  else if (const auto* star = dyn_cast<CXXOperatorCallExpr>(e); star && star->getOperator() == OO_Star)
    iterator = star->getArg(0);
  const auto* begin = iterator ? dyn_cast_or_null<VarDecl>(declOf(iterator)) : nullptr;
  const Expr* beginCall = begin && begin->getInit() ? ignoreWrappers(begin->getInit()) : nullptr;
  const Expr* rangeRef = nullptr;
  if (const auto* member = dyn_cast_or_null<CXXMemberCallExpr>(beginCall))
    rangeRef = member->getImplicitObjectArgument();
  else if (const auto* call = dyn_cast_or_null<CallExpr>(beginCall); call && call->getNumArgs() == 1)
    rangeRef = call->getArg(0);
  const auto* range = rangeRef ? dyn_cast_or_null<VarDecl>(declOf(rangeRef)) : nullptr;
  return range && range->getInit() ? range->getInit() : nullptr;
}

bool createsModule(const Expr* e) {
  if (const auto* construct = dyn_cast<CXXConstructExpr>(e))
    return !construct->getConstructor()->isCopyOrMoveConstructor();
  const auto* call = dyn_cast<CallExpr>(e);
  return call && (calleeName(call) == "make_shared" || calleeName(call) == "register_module");
}

const Expr* moduleObject(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(e);
      op && (op->getOperator() == OO_Arrow || op->getOperator() == OO_Star))
    return moduleObject(op->getArg(0));
  if (const auto* unary = dyn_cast_or_null<UnaryOperator>(e); unary && unary->getOpcode() == UO_Deref)
    return moduleObject(unary->getSubExpr());
  if (const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(e);
      call && call->getMethodDecl() && call->getMethodDecl()->getName() == "get")
    return moduleObject(call->getImplicitObjectArgument());
  return e;
}

const CXXRecordDecl* sequentialBlockClass(const FieldDecl* sequential) {
  const auto* owner = dyn_cast<CXXRecordDecl>(sequential->getParent());
  if (!owner) return nullptr;
  const CXXRecordDecl* block = nullptr;
  bool other = false;
  for (const CXXConstructorDecl* ctor : owner->ctors()) {
    const FunctionDecl* definition = ctor->getDefinition();
    if (!definition || !definition->hasBody()) continue;
    containsStmt(definition->getBody(), [&](const Stmt* s) {
      const auto* push = dyn_cast<CXXMemberCallExpr>(s);
      if (!push || !push->getMethodDecl() || push->getMethodDecl()->getName() != "push_back" || push->getNumArgs() == 0)
        return false;
      if (declOf(moduleObject(push->getImplicitObjectArgument())) != sequential) return false;
      const CXXRecordDecl* element = moduleImplClass(push->getArg(push->getNumArgs() - 1)->getType());
      if (element && isUserModule(element) && (!block || block == element)) block = element;
      else other = true;
      return false;
    });
  }
  return other ? nullptr : block;
}

std::vector<const Expr*> tensorArgs(const CallExpr* call, unsigned first) {
  std::vector<const Expr*> out;
  for (unsigned i = first; i < call->getNumArgs(); ++i) {
    const Expr* arg = ignoreWrappers(call->getArg(i));
    if (isa<CXXDefaultArgExpr>(arg)) continue;
    if (isTensorType(arg->getType())) {
      out.push_back(arg);
      continue;
    }
    // {a, b} for TensorList parameters.
    const Expr* list = arg;
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(list)) list = ignoreWrappers(std->getSubExpr());
    if (const auto* construct = dyn_cast<CXXConstructExpr>(list); construct && construct->getNumArgs() >= 1)
      list = ignoreWrappers(construct->getArg(0));
    if (const auto* std = dyn_cast<CXXStdInitializerListExpr>(list)) list = ignoreWrappers(std->getSubExpr());
    if (const auto* init = dyn_cast<InitListExpr>(list))
      for (const Expr* element : init->inits())
        if (isTensorType(element->getType())) out.push_back(ignoreWrappers(element));
  }
  return out;
}

std::optional<std::string> savedDataKey(const clang::CXXOperatorCallExpr* subscript) {
  if (subscript->getOperator() != clang::OO_Subscript || subscript->getNumArgs() != 2) return std::nullopt;
  const auto* map = llvm::dyn_cast<clang::MemberExpr>(ignoreWrappers(subscript->getArg(0)));
  if (!map || map->getMemberDecl()->getName() != "saved_data") return std::nullopt;
  // "key" reaches the map's operator[] as a std::string built from the literal.
  const clang::Expr* key = subscript->getArg(1);
  for (const clang::Expr* next = key; next;) {
    key = next->IgnoreImplicit()->IgnoreParens();
    const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(key);
    next = construct && construct->getNumArgs() > 0 ? construct->getArg(0) : nullptr;
  }
  if (const auto* literal = llvm::dyn_cast<clang::StringLiteral>(key)) return literal->getString().str();
  return std::nullopt;
}

std::string quotedName(const clang::NamedDecl* d) { return fmt::format("'{}'", d->getNameAsString()); }

std::string quotedSource(const Expr* e, const SourceManager& sm, const LangOptions& lang) {
  const CharSourceRange range = sm.getExpansionRange(e->getSourceRange());
  std::string collapsed;
  for (char c : Lexer::getSourceText(range, sm, lang)) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !collapsed.empty() && collapsed.back() == ' ') continue;
    collapsed += c;
  }
  if (collapsed.size() > 48) collapsed = collapsed.substr(0, 45) + "...";
  return "'" + collapsed + "'";
}

}  // namespace dtype_lint::analyzer::flow
