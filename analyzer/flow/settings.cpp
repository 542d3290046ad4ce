#include "flow/settings.h"

#include "flow/ast_helpers.h"
#include "torch_api.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"

namespace dtype_lint::analyzer::flow {

using namespace clang;

std::optional<std::string> namedValue(const Expr* e) {
  e = ignoreConversions(e);
  if (!e) return std::nullopt;
  e = e->IgnoreParenImpCasts();
  if (const auto* literal = dyn_cast<StringLiteral>(e); literal && literal->isOrdinary())
    return "\"" + literal->getString().str() + "\"";
  const auto* ref = dyn_cast<DeclRefExpr>(e);
  // torch::kCUDA: a constant that names an enumerator (c10::DeviceType::CUDA).
  // (A dtype constant is a dtype: the flow follows those as dtypes.)
  if (const auto* constant = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
      constant && constant->isConstexpr() && constant->getType()->isEnumeralType() &&
      !isScalarTypeType(constant->getType()) && constant->getInit())
    ref = dyn_cast<DeclRefExpr>(constant->getInit()->IgnoreParenImpCasts());
  if (ref)
    if (const auto* enumerator = dyn_cast<EnumConstantDecl>(ref->getDecl())) {
      const auto* type = dyn_cast<EnumDecl>(enumerator->getDeclContext());
      return (type && type->isScoped() ? type->getNameAsString() + "::" : "") + enumerator->getNameAsString();
    }
  return std::nullopt;
}

namespace {

thread_local KeyedSettings* liveKeyedSettings = nullptr;

// `cfg["amp"]`, `cfg.get("amp", …)`, `env_or("AMP", …)`: what is read from (the
// object's class, or the reader function) and the key; a no-argument
// conversion of such a read (`j["amp"].get<std::string>()`) is that read.
std::optional<std::pair<const Decl*, std::string>> keyedRead(const Expr* e) {
  const auto* call = dyn_cast_or_null<CallExpr>(ignoreConversions(e));
  if (const auto* conversion = dyn_cast_or_null<CXXMemberCallExpr>(call); conversion && conversion->getNumArgs() == 0)
    call = dyn_cast_or_null<CallExpr>(ignoreConversions(conversion->getImplicitObjectArgument()));
  if (!call || call->getNumArgs() == 0) return std::nullopt;
  const Expr* object = nullptr;
  std::vector<const Expr*> keys(call->arg_begin(), call->arg_end());
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    if (op->getOperator() != OO_Subscript || op->getNumArgs() != 2) return std::nullopt;
    object = op->getArg(0), keys = {op->getArg(1)};
  } else if (const auto* member = dyn_cast<CXXMemberCallExpr>(call)) {
    object = member->getImplicitObjectArgument();
  }
  // The key is the leading literals (`ini.get_bool("train", "amp", true)` is
  // "train.amp"), short of a default (`ini.get("train", "amp", "fp32")`). A
  // reader function takes the config object first (`lookup(cfg, "train", "amp", "fp32")`).
  const FunctionDecl* callee = isa<CXXOperatorCallExpr>(call) ? nullptr : call->getDirectCallee();
  const size_t first = !object && keys.size() > 1 && ignoreConversions(keys[0])->getType()->isRecordType() &&
                               isa<StringLiteral>(ignoreConversions(keys[1]))
                           ? 1
                           : 0;
  std::string name;
  for (size_t i = first; i < keys.size(); ++i) {
    const auto* literal = dyn_cast_or_null<StringLiteral>(ignoreConversions(keys[i]));
    if (!literal || !literal->isOrdinary() || literal->getLength() == 0) break;
    if (const ParmVarDecl* parameter = callee && i < callee->getNumParams() ? callee->getParamDecl(i) : nullptr;
        i > first && parameter &&
        (parameter->hasDefaultArg() || parameter->getName().contains_insensitive("default") ||
         parameter->getName().contains_insensitive("fallback") || parameter->getName().equals_insensitive("def") ||
         parameter->getName().equals_insensitive("dflt")))
      break;
    name += (name.empty() ? "" : ".") + literal->getString().str();
  }
  if (name.empty()) return std::nullopt;
  const Decl* source = nullptr;
  if (object) {
    QualType type = object->getType().getNonReferenceType();
    if (type->isPointerType()) type = type->getPointeeType();
    if (const CXXRecordDecl* record = type->getAsCXXRecordDecl()) source = record->getCanonicalDecl();
  } else if (const FunctionDecl* reader = call->getDirectCallee()) {
    source = reader->getCanonicalDecl();
  }
  if (!source) return std::nullopt;
  return std::pair{source, name};
}

// What reads the setting: `name` in `name ? name : "fp16"` or `name ?: "fp16"`
// (getenv's result, or its default when unset).
const Expr* withoutDefault(const Expr* e) {
  e = ignoreConversions(e);
  const auto* choice = dyn_cast_or_null<AbstractConditionalOperator>(e ? e->IgnoreParenImpCasts() : nullptr);
  if (!choice) return e;
  const Expr* given = choice->getTrueExpr()->IgnoreParenImpCasts();
  const Expr* fallback = choice->getFalseExpr()->IgnoreParenImpCasts();
  if (isa<StringLiteral>(given)) std::swap(given, fallback);
  if (isa<OpaqueValueExpr>(given)) given = cast<BinaryConditionalOperator>(choice)->getCommon();
  return isa<StringLiteral>(fallback) ? ignoreConversions(given) : e;
}

// The variable, parameter or field holding a setting: a string or an enum.
const ValueDecl* settingRead(const Expr* e) {
  e = withoutDefault(e);
  if (!e) return nullptr;
  const ValueDecl* d = KeyedSettings::of(e);
  if (!d) d = declOf(e->IgnoreParenImpCasts());
  if (!d || !isa<VarDecl, FieldDecl>(d)) return nullptr;
  const QualType type = d->getType().getNonReferenceType();
  const bool isString = type->isPointerType()
                            ? type->getPointeeType()->isCharType()
                            : (type->getAsRecordDecl() && (type->getAsRecordDecl()->getName() == "basic_string" ||
                                                           type->getAsRecordDecl()->getName() == "basic_string_view"));
  if (!isString && !type->isEnumeralType()) return nullptr;
  return cast<ValueDecl>(d->getCanonicalDecl());
}

std::optional<SettingTest> comparison(const Expr* a, const Expr* b, bool equal) {
  for (int swap = 0; swap < 2; ++swap, std::swap(a, b))
    if (const auto value = namedValue(b))
      if (const ValueDecl* setting = settingRead(a)) return SettingTest{setting, ignoreConversions(a), *value, equal};
  return std::nullopt;
}

// strcmp(s, "fp16") and its kin: 0 when equal.
std::optional<SettingTest> stringCompare(const Expr* e) {
  const auto* call = dyn_cast<CallExpr>(e->IgnoreParenImpCasts());
  if (!call || call->getNumArgs() < 2) return std::nullopt;
  const std::string name = calleeName(call);
  if (name != "strcmp" && name != "strcasecmp" && name != "strncmp") return std::nullopt;
  return comparison(call->getArg(0), call->getArg(1), true);
}

// The {key, mapped} entries of a map's initializer list.
std::vector<std::pair<std::string, const Expr*>> mapEntries(const Expr* init) {
  std::vector<std::pair<std::string, const Expr*>> entries;
  const InitListExpr* list = nullptr;
  for (const Expr* e = init; e && !list;) {
    e = e->IgnoreImplicit();
    if (const auto* l = dyn_cast<InitListExpr>(e)) list = l;
    else if (const auto* initializers = dyn_cast<CXXStdInitializerListExpr>(e)) e = initializers->getSubExpr();
    else if (const auto* construct = dyn_cast<CXXConstructExpr>(e); construct && construct->getNumArgs() >= 1)
      e = construct->getArg(0);
    else if (const auto* cleanups = dyn_cast<ExprWithCleanups>(e)) e = cleanups->getSubExpr();
    else e = nullptr;
  }
  if (!list) return entries;
  for (const Expr* element : list->inits()) {
    element = element->IgnoreImplicit();
    const Expr *key = nullptr, *mapped = nullptr;
    if (const auto* pair = dyn_cast<CXXConstructExpr>(element); pair && pair->getNumArgs() == 2)
      key = pair->getArg(0), mapped = pair->getArg(1);
    else if (const auto* braces = dyn_cast<InitListExpr>(element); braces && braces->getNumInits() == 2)
      key = braces->getInit(0), mapped = braces->getInit(1);
    const auto name = key ? namedValue(key) : std::nullopt;
    if (!name) return {};
    entries.emplace_back(*name, mapped);
  }
  return entries;
}

}  // namespace

KeyedSettings::KeyedSettings(ASTContext& context) : context_(context), enclosing_(liveKeyedSettings) {
  liveKeyedSettings = this;
}

KeyedSettings::~KeyedSettings() { liveKeyedSettings = enclosing_; }

void KeyedSettings::forgetAfterCrash() { liveKeyedSettings = nullptr; }

const ValueDecl* KeyedSettings::of(const Expr* read) {
  KeyedSettings* live = liveKeyedSettings;
  const auto key = live ? keyedRead(read) : std::nullopt;
  if (!key) return nullptr;
  ASTContext& context = live->context_;
  const QualType type = ignoreConversions(read)->getType().getNonReferenceType().getUnqualifiedType();
  const VarDecl*& setting = live->settings_[{key->first, key->second, type.getCanonicalType().getTypePtr()}];
  if (!setting)
    setting = VarDecl::Create(context, context.getTranslationUnitDecl(), read->getBeginLoc(), read->getBeginLoc(),
                              &context.Idents.get(key->second), type, context.getTrivialTypeSourceInfo(type), SC_None);
  return setting;
}

bool KeyedSettings::isKeyed(const ValueDecl* setting) {
  for (const KeyedSettings* live = liveKeyedSettings; live; live = live->enclosing_)
    for (const auto& [key, made] : live->settings_)
      if (made == setting) return true;
  return false;
}

std::optional<SettingTest> settingTest(const Expr* condition) {
  condition = condition->IgnoreParenImpCasts();
  if (const auto* negation = dyn_cast<UnaryOperator>(condition); negation && negation->getOpcode() == UO_LNot)
    return stringCompare(negation->getSubExpr());
  const auto equality = equalityTest(condition);
  if (!equality) return std::nullopt;
  // strcmp(s, "fp16") == 0
  for (const auto& [call, zero] : {std::pair{equality->lhs, equality->rhs}, std::pair{equality->rhs, equality->lhs}})
    if (const auto* literal = dyn_cast<IntegerLiteral>(zero->IgnoreParenImpCasts());
        literal && literal->getValue() == 0)
      if (auto test = stringCompare(call)) {
        test->holdsOnValue = equality->isEqual;
        return test;
      }
  return comparison(equality->lhs, equality->rhs, equality->isEqual);
}

namespace {

// `map.at(key)`, `map[key]`: the map and the key.
std::optional<std::pair<const Expr*, const Expr*>> mapLookup(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(e);
      call && call->getNumArgs() == 1 && calleeName(call) == "at")
    return std::pair{call->getImplicitObjectArgument(), call->getArg(0)};
  if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(e);
      op && op->getOperator() == OO_Subscript && op->getNumArgs() == 2)
    return std::pair{op->getArg(0), op->getArg(1)};
  return std::nullopt;
}

// The variable a map expression names: `dtypes`, or `precision_table()`
// returning its static local (`static const std::map<...> table = {...}; return table;`).
const VarDecl* mapVariable(const Expr* map) {
  map = map->IgnoreParenImpCasts();
  if (const auto* call = dyn_cast<CallExpr>(map); call && call->getNumArgs() == 0) {
    const FunctionDecl* def = call->getDirectCallee() ? call->getDirectCallee()->getDefinition() : nullptr;
    const auto* body = def ? dyn_cast_or_null<CompoundStmt>(def->getBody()) : nullptr;
    const auto* ret = body && !body->body_empty() ? dyn_cast<ReturnStmt>(body->body_back()) : nullptr;
    const auto* local = ret && ret->getRetValue() ? dyn_cast_or_null<VarDecl>(declOf(ret->getRetValue())) : nullptr;
    return local && local->isStaticLocal() ? local : nullptr;
  }
  return dyn_cast_or_null<VarDecl>(declOf(map));
}

// `map` looked up with `key`: a map variable whose initializer names its keys, and a setting as the key.
std::optional<SettingLookup> lookupOf(const Expr* map, const Expr* key) {
  const VarDecl* var = mapVariable(map);
  const ValueDecl* setting = settingRead(key);
  if (!var || !setting || !var->getInit()) return std::nullopt;
  auto entries = mapEntries(var->getInit());
  if (entries.empty()) return std::nullopt;
  return SettingLookup{setting, withoutDefault(key), std::move(entries)};
}

// The find() whose result the iterator `e` holds: `auto it = dtypes.find(name)`.
const CXXMemberCallExpr* findOf(const Expr* e) {
  const Expr* base = e->IgnoreImplicit();
  if (const auto* arrow = dyn_cast<CXXOperatorCallExpr>(base); arrow && arrow->getOperator() == OO_Arrow)
    base = arrow->getArg(0);
  const auto* it = dyn_cast_or_null<VarDecl>(declOf(base->IgnoreParenImpCasts()));
  if (!it || !it->getInit()) return nullptr;
  const auto* find = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(it->getInit()));
  return find && find->getNumArgs() == 1 && calleeName(find) == "find" ? find : nullptr;
}

// The lookup whose result the iterator `e` holds, with a setting as the key.
std::optional<SettingLookup> foundBy(const Expr* e) {
  const CXXMemberCallExpr* find = findOf(e);
  if (!find) return std::nullopt;
  return lookupOf(find->getImplicitObjectArgument(), find->getArg(0));
}

// `it->second` of an iterator a find() gave: the map it found in.
const Expr* iteratorMap(const Expr* e) {
  const auto* member = dyn_cast_or_null<MemberExpr>(ignoreWrappers(e));
  if (!member || !member->getMemberDecl()->getDeclName().isIdentifier() ||
      member->getMemberDecl()->getName() != "second")
    return nullptr;
  const CXXMemberCallExpr* find = findOf(member->getBase());
  return find ? find->getImplicitObjectArgument() : nullptr;
}

bool isEndCall(const Expr* e) {
  const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(e));
  return call && call->getNumArgs() == 0 && (calleeName(call) == "end" || calleeName(call) == "cend");
}

}  // namespace

std::optional<SettingSwitch> settingSwitch(const SwitchStmt* s) {
  const ValueDecl* setting = s->getCond() ? settingRead(s->getCond()) : nullptr;
  if (!setting) return std::nullopt;
  SettingSwitch out{setting, ignoreConversions(s->getCond()), {}};
  for (const SwitchCase* c = s->getSwitchCaseList(); c; c = c->getNextSwitchCase()) {
    const auto* labelled = dyn_cast<CaseStmt>(c);
    // A case range or a value not named (a number): which case runs is not known.
    if (labelled && (labelled->caseStmtIsGNURange() || !namedValue(labelled->getLHS()))) return std::nullopt;
    out.cases.emplace_back(c, labelled ? namedValue(labelled->getLHS()) : std::nullopt);
  }
  return out;
}

std::vector<std::pair<std::string, const Expr*>> lookedUpEntries(const Expr* e) {
  const auto lookup = mapLookup(e);
  const Expr* map = lookup ? lookup->first : iteratorMap(e);
  const VarDecl* var = map ? mapVariable(map) : nullptr;
  return var && var->getInit() ? mapEntries(var->getInit()) : std::vector<std::pair<std::string, const Expr*>>{};
}

std::optional<SettingLookup> settingLookup(const Expr* e) {
  e = ignoreWrappers(e);
  if (const auto lookup = mapLookup(e)) return lookupOf(lookup->first, lookup->second);
  // `auto it = dtypes.find(name); ...; return it->second;`
  if (const auto* member = dyn_cast_or_null<MemberExpr>(e);
      member && member->getMemberDecl()->getDeclName().isIdentifier() && member->getMemberDecl()->getName() == "second")
    return foundBy(member->getBase());
  return std::nullopt;
}

std::optional<SettingMembership> settingMembership(const Expr* condition) {
  condition = ignoreWrappers(condition);
  if (!condition) return std::nullopt;
  // `it == dtypes.end()`, `it != dtypes.end()`.
  const auto equality = equalityTest(condition);
  const Expr *a = equality ? equality->lhs : nullptr, *b = equality ? equality->rhs : nullptr;
  const bool equal = equality && equality->isEqual;
  if (a && isEndCall(a)) std::swap(a, b);
  if (a && isEndCall(b))
    if (auto lookup = foundBy(a)) return SettingMembership{std::move(*lookup), !equal};
  // `dtypes.count(name)`, `dtypes.contains(name)`.
  if (const auto* call = dyn_cast<CXXMemberCallExpr>(condition);
      call && call->getNumArgs() == 1 && (calleeName(call) == "count" || calleeName(call) == "contains"))
    if (auto lookup = lookupOf(call->getImplicitObjectArgument(), call->getArg(0)))
      return SettingMembership{std::move(*lookup), true};
  return std::nullopt;
}

}  // namespace dtype_lint::analyzer::flow
