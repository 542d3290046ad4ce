#include "interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <numbers>
#include <tuple>

#include "config_files.h"
#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dl209_scaler_with_bfloat16.h"
#include "dtype_lint/dl304_optimizer_epsilon.h"
#include "dtype_lint/op_contracts.h"
#include "torch_names.h"

namespace dtype_lint::python {

namespace fs = std::filesystem;
using Kind = Value::Kind;

namespace {

// main -> Trainer.fit -> train_step -> model -> layer -> block -> a custom Function's forward and
// backward is nine deep; the step budget bounds the work.
constexpr size_t kMaxCallDepth = 16;
constexpr long kRecursionFollowed = 2;
constexpr size_t kMaxExpressionDepth = 256;
constexpr size_t kMaxBlockDepth = 256;
constexpr size_t kStepBudget = 20000;  // statements per root, loops' two passes and calls included
constexpr size_t kItemsIteratedOneByOne = 4;  // a longer known list: its items joined, two passes
constexpr size_t kModulesIteratedOneByOne = 64;  // model.modules(), when each is known
constexpr size_t kEntriesIteratedOneByOne = 32;  // a config dict's keys or items(): each setting in turn

std::string unquote(std::string_view text) {
  // 'x', "x", f"x", r'x', """x""": the content between the quotes.
  size_t start = text.find_first_of("'\"");
  if (start == std::string_view::npos) return std::string(text);
  const char quote = text[start];
  size_t quotes = text.compare(start, 3, std::string(3, quote)) == 0 ? 3 : 1;
  if (text.size() < start + 2 * quotes) return {};
  return std::string(text.substr(start + quotes, text.size() - start - 2 * quotes));
}

Note noteAt(const Node& node, std::string message) { return Note{node.location(), std::move(message)}; }

// An op autocast casts on some device (torch.cdist runs in Float under CUDA autocast).
bool onAnAutocastList(std::string_view op) {
  constexpr TorchVersion kLatest{99, 0};
  return autocastPolicy(op, Device::CUDA, kLatest) != AutocastPolicy::None ||
         autocastPolicy(op, Device::CPU, kLatest) != AutocastPolicy::None;
}

// Whether an expression calls something (a comprehension's body that may act, not only compute).
bool containsCall(const Node& expression) {
  std::vector<Node> pending{expression};
  while (!pending.empty()) {
    const Node node = pending.back();
    pending.pop_back();
    if (node.is("call")) return true;
    for (const Node& child : node.children()) pending.push_back(child);
  }
  return false;
}

// File paths, for the configuration file a program finds next to itself
// (`os.path.join(os.path.dirname(__file__), "conf", "x.yaml")`,
// `Path(__file__).resolve().parent / "x.yaml"`): os.path's functions and
// pathlib.Path of known strings; a path is kept as its String.
std::optional<Value> pathFunction(const std::string& name, const std::vector<Value>& args) {
  if (!std::all_of(args.begin(), args.end(), [](const Value& a) { return a.is(Value::Kind::String); }))
    return std::nullopt;
  if (name == "os.path.join" || name == "pathlib.Path" || name == "pathlib.PurePath") {
    fs::path joined = args.empty() ? fs::path(".") : fs::path();
    for (const Value& part : args) joined /= part.text;
    return Value::string(joined.string());
  }
  if (args.size() != 1) return std::nullopt;
  const fs::path path(args[0].text);
  std::error_code error;
  if (name == "os.path.dirname" || name == ".parent") return Value::string(path.parent_path().string());
  if (name == "os.path.basename" || name == ".name") return Value::string(path.filename().string());
  if (name == ".stem") return Value::string(path.stem().string());
  if (name == "os.path.normpath") return Value::string(path.lexically_normal().string());
  if (name == "os.path.abspath" || name == "os.path.realpath" || name == "os.path.expanduser" || name == ".resolve" ||
      name == ".absolute" || name == ".expanduser")
    return Value::string(fs::absolute(path, error).lexically_normal().string());
  return std::nullopt;
}

// `cls` is `target` or derives from it, through the program's classes.
bool derivesFromClass(const ClassInfo& cls, const ClassInfo& target) {
  if (&cls == &target) return true;
  return std::any_of(cls.bases.begin(), cls.bases.end(), [&](const Value& base) {
    return base.is(Value::Kind::Class) && derivesFromClass(*base.cls, target);
  });
}

// The base class of the analyzed code whose attributes a class inherits (its last such base).
const ClassInfo* analyzedBase(const ClassInfo& cls) {
  const ClassInfo* base = nullptr;
  for (const Value& b : cls.bases)
    if (b.is(Value::Kind::Class)) base = b.cls;
  return base;
}

// isinstance(value, types) for the builtin types a value's kind tells apart: dict, str, bool, and list and
// tuple together (a List is either); unknown for the rest (int or float of a Number, a user class).
Value isInstance(const Value& value, const Value& types) {
  using Kind = Value::Kind;
  std::vector<std::string> names;
  for (const Value& type : types.is(Kind::List) ? types.items : std::vector<Value>{types}) {
    if (!type.is(Kind::Name)) return Value::unknown();
    names.push_back(type.text);
  }
  auto named = [&](std::string_view name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  const bool sequence = named("list") && named("tuple");
  for (const std::string& name : names)
    if (name != "dict" && name != "str" && name != "bool" && name != "list" && name != "tuple") return Value::unknown();
  switch (value.kind) {
  case Kind::Dict: return Value::boolean(named("dict"));
  case Kind::String: return Value::boolean(named("str"));
  case Kind::Bool: return Value::boolean(named("bool"));
  case Kind::List:
    if (sequence) return Value::boolean(true);
    return named("list") || named("tuple") ? Value::unknown() : Value::boolean(false);
  case Kind::Number:  // an int or float: none of these
  case Kind::None:
  case Kind::Tensor:
  case Kind::Dtype: return Value::boolean(false);
  default: return Value::unknown();
  }
}

// A dict's item by a constant key, added (holding `missing`) where the dict lacks it.
Value& itemOf(Value& dict, Value key, Value missing = Value::unknown()) {
  for (size_t i = 0; i < dict.keys.size(); ++i)
    if (dict.keys[i].sameConstant(key)) return dict.items[i];
  key.setting = 0;
  dict.keys.push_back(std::move(key));
  dict.items.push_back(std::move(missing));
  return dict.items.back();
}

// `item = value` where storage() found the item: a config file's key the
// program sets (`raw["train"]["precision"] = args.precision`) is then read as
// that value.
void storeInto(Value& item, const Value& value) {
  item = value;
  item.setByProgram = true;
}

// Whether one of the function's decorators is spelled as one of `names` ("@property").
bool decoratedAs(const FunctionInfo& function, std::initializer_list<std::string_view> names) {
  return std::any_of(function.decorators.begin(), function.decorators.end(),
                     [&](const Node& d) { return std::find(names.begin(), names.end(), d.text()) != names.end(); });
}

// Whether a decorator of the function names `name` (`@custom_bwd`, `@torch.amp.custom_bwd(device_type="cuda")`).
bool decoratedWith(const FunctionInfo& function, std::string_view name) {
  return std::any_of(function.decorators.begin(), function.decorators.end(),
                     [&](const Node& d) { return d.text().find(name) != std::string_view::npos; });
}

// Whether a function's body yields (not in a function or class defined in it).
bool yields(const Node& node) {
  if (node.is("yield")) return true;
  if (node.is("function_definition") || node.is("class_definition") || node.is("lambda")) return false;
  for (const Node& child : node.children())
    if (yields(child)) return true;
  return false;
}

// Whether an expression's last name says it holds a module ("model",
// "self.teacher", "netD"), not a tensor.
bool namesAModule(std::string_view expression) {
  std::string name(expression.substr(expression.rfind('.') == std::string_view::npos ? 0 : expression.rfind('.') + 1));
  if (name.find('(') != std::string::npos) name = std::string(expression);  // model.cuda(): the receiver's name
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  for (const char* word : {"model", "net", "module", "teacher", "student", "encoder", "decoder", "backbone",
                           "generator", "discriminator", "classifier"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

// The dtype an op autocast casts runs in: the enabled device's (CUDA's where
// both are on), by its list: the low-precision dtype, Float, or unknown (promote).
DtypeSet autocastResult(const std::string& op, const AutocastState& autocast) {
  const bool cuda = autocast.cuda.enabled == Tristate::On;
  const DeviceAutocast& device = cuda ? autocast.cuda : autocast.cpu;
  switch (autocastPolicy(op, cuda ? Device::CUDA : Device::CPU, TorchVersion{2, 0})) {
  case AutocastPolicy::LowerPrecision: return device.dtype;
  case AutocastPolicy::Fp32: return DtypeSet(ScalarType::Float);
  default: return DtypeSet::unknown();
  }
}

// The same place, or neither known: two dtypes set by the same conversion.
bool sameOrigin(const std::optional<Note>& a, const std::optional<Note>& b) {
  if (!a || !b) return !a && !b;
  return a->location.sameStart(b->location);
}

// [a] + [b for _ in range(n)]: the items of both, standing for more where either does.
Value concatenated(const Value& left, const Value& right) {
  Value list = left;
  list.items.insert(list.items.end(), right.items.begin(), right.items.end());
  list.itemsStandForMore = left.itemsStandForMore || right.itemsStandForMore;
  list.setting = 0;
  return list;
}

}  // namespace

// Where a statement runs: its file, where control leaves to, the calls that led here.
struct Interpreter::Frame {
  ModuleFile* module = nullptr;
  bool topLevel = false;
  std::vector<State>* returns = nullptr;
  std::vector<Value>* returnValues = nullptr;
  std::vector<State>* breaks = nullptr;
  std::vector<State>* continues = nullptr;
  std::vector<Note> callChain;
  // Inside a user module called from code outside one (`self.model(batch)` in
  // a trainer): the call's number, callChain's length inside it, and the
  // origin its parameters share (none: they do not all share one). Where that
  // is a conversion of the module as a whole, a layer given one of that call's
  // inputs raises because of the call: the mismatch is reported there. (A
  // module of the dtypes it was built with keeps it in its forward, where the
  // runtime hooks report it too.)
  struct ModuleEntry {
    uint32_t number = 0;
    size_t chainLength = 0;
    std::optional<std::optional<Note>> sharedOrigin;
  };
  std::optional<ModuleEntry> moduleEntry;
  bool inCustomBackward = false;  // a custom autograd Function's backward, or what it calls
  std::optional<Note> forwardUnderAutocast;  // where that Function's forward ran under autocast
  std::optional<AutocastState>* autocastAtYield = nullptr;  // a @contextmanager's: what its `with` body runs under
  std::vector<Value>* yielded = nullptr;  // a generator's: what it yields, one value per yield
  // The autocast regions this function is inside, outermost first: what each
  // saved on entry. A `return` leaves them all.
  std::vector<const AutocastState*> openRegions;
};

// A call's arguments, evaluated.
struct Interpreter::Call {
  Node node;
  std::vector<Value> args;
  std::vector<Node> argNodes;
  std::map<std::string, Value> kwargs;
  std::map<std::string, Node> kwargNodes;
  bool spread = false;  // *args or **kwargs: the arguments are not all known
  bool spreadsParsedArguments = false;  // **vars(parser.parse_args()), **kwargs keyed at run time: each a setting
  std::vector<Value> spreadItems;  // *items of a list built in a loop: the items standing for all
  std::optional<Value> spreadConfigFile;  // **raw of a config file's dict: it may give any other keyword too
  std::shared_ptr<const std::map<std::string, Value>> captured;  // a closure's: its enclosing function's variables

  const Value* kw(const std::string& name) const {
    auto it = kwargs.find(name);
    return it == kwargs.end() ? nullptr : &it->second;
  }
  // The argument at `position`, or by `name`.
  const Value* arg(size_t position, const std::string& name) const {
    if (const Value* v = kw(name)) return v;
    return position < args.size() ? &args[position] : nullptr;
  }
  Node argNode(size_t position, const std::string& name) const {
    if (auto it = kwargNodes.find(name); it != kwargNodes.end()) return it->second;
    return position < argNodes.size() ? argNodes[position] : Node();
  }
  // The positional arguments that are tensors, each described by its expression where it has no name.
  std::vector<Value> tensorArgs() const;
};

// ---------------------------------------------------------------------------
// Files and imports.

ModuleFile* Interpreter::load(const std::string& path) {
  std::error_code error;
  const std::string canonical = fs::weakly_canonical(path, error).string();
  const std::string key = error ? path : canonical;
  if (auto it = modules_.find(key); it != modules_.end()) return it->second.get();
  std::string why;
  auto source = SourceFile::parse(path, why);
  if (!source) {
    toolNotes_.push_back(Note{SourceLocation::startOf(path), why});
    return nullptr;
  }
  lines_ += source->lines();
  if (unsigned line = source->firstErrorLine())
    toolNotes_.push_back(
        Note{SourceLocation::startOf(path), fmt::format("syntax error at line {}: findings cover what parsed", line)});
  auto module = std::make_unique<ModuleFile>();
  module->source = std::move(source);
  ModuleFile* raw = module.get();
  modules_[key] = std::move(module);
  return raw;
}

std::string Interpreter::resolveImport(const std::string& importer, std::string_view dotted, int parentLevels) const {
  std::string relative(dotted);
  std::replace(relative.begin(), relative.end(), '.', '/');
  fs::path dir = fs::path(importer).parent_path();
  // Only files of the analyzed tree: under the directory of an input (an
  // installed torch or transformers is library code, not followed).
  auto inTree = [&](const fs::path& p) {
    const std::string text = fs::weakly_canonical(p).string();
    return std::any_of(roots_.begin(), roots_.end(), [&](const std::string& root) {
      return text.size() > root.size() && text.compare(0, root.size(), root) == 0 && text[root.size()] == '/';
    });
  };
  auto candidate = [&](const fs::path& base) -> std::string {
    // `from . import x`: the package itself, its __init__.py.
    if (relative.empty()) {
      const fs::path package = base / "__init__.py";
      return parentLevels > 0 && fs::is_regular_file(package) && inTree(package) ? package.string() : std::string();
    }
    for (const fs::path& p : {base / (relative + ".py"), base / relative / "__init__.py"})
      if (fs::is_regular_file(p) && inTree(p)) return p.string();
    return {};
  };
  if (parentLevels > 0) {  // from . import x, from ..pkg import y
    for (int i = 1; i < parentLevels; ++i) dir = dir.parent_path();
    return candidate(dir);
  }
  // The importing file's directory and the directories above it (a package's root).
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (std::string found = candidate(dir); !found.empty()) return found;
    if (dir == dir.parent_path()) break;
  }
  return {};
}

void Interpreter::executeModule(ModuleFile& module, bool asMain) {
  if (module.executed) return;
  module.executed = true;
  // An imported file's top level does not spend its importer's budget.
  const size_t importerSteps = steps_;
  State state;
  state.locals["__name__"] = Value::string(asMain ? "__main__" : fs::path(module.source->path()).stem().string());
  Frame frame;
  frame.module = &module;
  frame.topLevel = true;
  execBlock(module.source->root(), state, frame);
  module.globals = state.locals;
  module.finalState = std::move(state);
  module.finalState.reached = true;
  steps_ = importerSteps;
}

ModuleFile* Interpreter::importFile(const std::string& path, const ModuleFile& importer) {
  ModuleFile* module = load(path);
  if (!module) return nullptr;
  imports_.emplace_back(&importer, module);
  executeModule(*module, /*asMain=*/false);
  return module;
}

std::vector<std::set<std::string>> Interpreter::programs() const {
  std::map<const ModuleFile*, const ModuleFile*> parent;
  std::function<const ModuleFile*(const ModuleFile*)> find = [&](const ModuleFile* m) {
    auto it = parent.try_emplace(m, m).first;
    return it->second == m ? m : (it->second = find(it->second));
  };
  for (const auto& [importer, imported] : imports_) parent[find(importer)] = find(imported);
  std::map<const ModuleFile*, std::set<std::string>> groups;
  for (const auto& [key, module] : modules_) groups[find(module.get())].insert(module->source->path());
  std::vector<std::set<std::string>> out;
  for (auto& [representative, files] : groups) out.push_back(std::move(files));
  return out;
}

std::optional<Value> Interpreter::importedGlobal(const ModuleFile& module, const std::string& name, State& state) {
  auto it = module.globals.find(name);
  if (it == module.globals.end()) return std::nullopt;
  // Objects the imported file made live in its final state's heap.
  if (it->second.is(Kind::Object) && !state.heap.count(it->second.object))
    if (auto object = module.finalState.heap.find(it->second.object); object != module.finalState.heap.end())
      state.heap.insert(*object);
  return it->second;
}

void Interpreter::run(const std::vector<std::string>& files) {
  for (const std::string& file : files) roots_.insert(fs::weakly_canonical(fs::absolute(file)).parent_path().string());
  for (const std::string& file : files) {
    steps_ = 0;
    if (ModuleFile* module = load(file)) {
      root_ = module;
      executeModule(*module, /*asMain=*/true);
    }
  }
  // What no run reached: from unknown arguments, with the objects the
  // module's top level made, whose protocol state is unknown.
  std::vector<ModuleFile*> loaded;
  for (auto& [path, module] : modules_) loaded.push_back(module.get());
  for (ModuleFile* module : loaded) {
    root_ = module;
    auto rootState = [&] {
      State state = module->finalState;
      state.locals.clear();
      state.autocast = AutocastState{};
      state.protocol = ScalerProtocol{};
      state.protocol.adoptDeclarations(module->finalState.protocol);
      return state;
    };
    Frame frame;
    frame.module = module;
    for (size_t i = 0; i < module->classes.size(); ++i) {
      const ClassInfo& cls = *module->classes[i];
      if (std::none_of(cls.methods.begin(), cls.methods.end(),
                       [&](const auto& m) { return !analyzed_.count(m.second); }))
        continue;
      steps_ = 0;
      State state = rootState();
      Call construct;
      construct.node = cls.definition;
      construct.spread = true;
      Value instance = instantiate(cls, construct, state, frame);
      const State afterInit = state;
      for (const auto& [name, method] : cls.methods) {
        if (analyzed_.count(method)) continue;
        State methodState = afterInit;
        methodState.protocol = ScalerProtocol{};
        methodState.protocol.adoptDeclarations(afterInit.protocol);
        Call unknownArgs;
        unknownArgs.node = method->definition;
        unknownArgs.spread = true;
        callFunction(*method, instance, unknownArgs, methodState, frame);
      }
    }
    for (size_t i = 0; i < module->functions.size(); ++i) {
      const FunctionInfo* function = module->functions[i].get();
      if (analyzed_.count(function) || function->owner) continue;
      steps_ = 0;
      State state = rootState();
      Call unknownArgs;
      unknownArgs.node = function->definition;
      unknownArgs.spread = true;
      callFunction(*function, std::nullopt, unknownArgs, state, frame);
    }
  }
  anchorAtScaler(findings_);
}

// ---------------------------------------------------------------------------
// Statements.

Value Interpreter::elementOf(const Value& iterable, const State& state) const {
  // for opt in (self.enc_opt, self.dec_opt): each element in turn is not
  // followed; one object all along is.
  if (iterable.is(Kind::List) && !iterable.items.empty()) {
    Value element = iterable.items.front();
    for (const Value& item : iterable.items) element = joinValues(element, item);
    return element;
  }
  // for row in x, q, k, v = qkv: slices along the first dimension, of its dtype.
  if (iterable.is(Kind::Tensor)) return Value::tensor(iterable.dtype, iterable.origin);
  // for p in model.parameters(): a parameter, of the module's dtype.
  if (iterable.is(Kind::Parameters)) {
    Value element = Value::tensor(parametersOf(iterable.object, state));
    element.parameterOf = iterable.object;
    if (!iterable.named) return element;
    Value pair = Value::make(Kind::List);  // for name, p in model.named_parameters()
    pair.items = {Value::unknown(), element};
    return pair;
  }
  // for block in self.blocks: a ModuleList of one kind of module, by its first.
  if (iterable.is(Kind::Object))
    if (auto it = state.heap.find(iterable.object);
        it != state.heap.end() && it->second.type == Object::Type::Container && !it->second.children.empty()) {
      const auto first = state.heap.find(it->second.children.front());
      const bool alike = first != state.heap.end() &&
                         std::all_of(it->second.children.begin(), it->second.children.end(), [&](ObjectId child) {
                           auto c = state.heap.find(child);
                           return c != state.heap.end() && c->second.cls == first->second.cls &&
                                  c->second.typeName == first->second.typeName;
                         });
      if (alike) return Value::objectRef(Kind::Object, first->first);
    }
  return Value::unknown();
}

void Interpreter::execBlock(const Node& block, State& state, Frame& frame) {
  if (blockDepth_ >= kMaxBlockDepth) return;  // deeper than Python compiles: not followed
  ++blockDepth_;
  for (const Node& statement : block.children()) {
    if (!state.reached) break;
    exec(statement, state, frame);
  }
  --blockDepth_;
}

void Interpreter::exec(const Node& statement, State& state, Frame& frame) {
  if (++steps_ > kStepBudget) {
    if (steps_ == kStepBudget + 1)
      toolNotes_.push_back(noteAt(statement, "the analysis stopped here: the file's paths exceed its budget"));
    state.reached = false;
    return;
  }
  const std::string_view kind = statement.kind();
  if (kind == "expression_statement") {
    for (const Node& child : statement.children()) {
      if (child.is("assignment") || child.is("augmented_assignment")) execAssignment(child, state, frame);
      else eval(child, state, frame);
    }
  } else if (kind == "if_statement") {
    execIf(statement, state, frame);
  } else if (kind == "for_statement" || kind == "while_statement") {
    execLoop(statement, state, frame);
  } else if (kind == "with_statement") {
    execWith(statement, state, frame);
  } else if (kind == "try_statement") {
    execTry(statement, state, frame);
  } else if (kind == "function_definition") {
    defineFunction(statement, {}, state, frame);
  } else if (kind == "class_definition") {
    defineClass(statement, {}, state, frame);
  } else if (kind == "decorated_definition") {
    std::vector<Node> decorators;
    for (const Node& child : statement.children())
      if (child.is("decorator")) decorators.push_back(child);
    const Node definition = statement.field("definition");
    if (definition.is("function_definition")) defineFunction(definition, decorators, state, frame);
    else if (definition.is("class_definition")) defineClass(definition, decorators, state, frame);
  } else if (kind == "return_statement") {
    Value result = Value::none();
    if (auto children = statement.children(); !children.empty()) result = eval(children.front(), state, frame);
    if (frame.returns) {
      frame.returns->push_back(state);
      for (auto region = frame.openRegions.rbegin(); region != frame.openRegions.rend(); ++region)
        leaveAutocast(**region, frame.returns->back());
      frame.returnValues->push_back(result);
    }
    state.reached = false;
  } else if (kind == "raise_statement") {
    for (const Node& child : statement.children()) eval(child, state, frame);
    state.reached = false;
  } else if (kind == "break_statement" || kind == "continue_statement") {
    auto* targets = kind == "break_statement" ? frame.breaks : frame.continues;
    if (targets) targets->push_back(state);
    if (kind == "continue_statement") state.protocol.leaveIteration(statement.location());
    state.reached = false;
  } else if (kind == "import_statement" || kind == "import_from_statement") {
    execImport(statement, state, frame);
  } else if (kind == "assert_statement" || kind == "delete_statement") {
    for (const Node& child : statement.children()) eval(child, state, frame);
  } else if (kind == "block" || kind == "module") {
    execBlock(statement, state, frame);
  }
  // pass, global, nonlocal, print (Python 2), type aliases: nothing to follow.
}

void Interpreter::execAssignment(const Node& assignment, State& state, Frame& frame) {
  const Node target = assignment.field("left");
  const Node right = assignment.field("right");
  if (!right) return;  // a bare annotation: `x: int`
  Value value;
  if (assignment.is("augmented_assignment")) {
    // x += y, loss /= accumulation: the binary op on the current value.
    const Value left = eval(target, state, frame);
    const Value other = eval(right, state, frame);
    std::string op(assignment.field("operator").text());
    if (!op.empty() && op.back() == '=') op.pop_back();
    if (left.isGradient && op == "/" && (right.is("identifier") || right.is("attribute")))
      state.manualScaling.gradientsDividedBy(std::hash<std::string>{}(std::string(right.text())), assignment.location(),
                                             findings_);
    if (left.is(Kind::Tensor) && (other.is(Kind::Tensor) || other.is(Kind::Number) || other.is(Kind::Unknown))) {
      value = left;
      if (other.is(Kind::Tensor) && left.dtype.single() && other.dtype.single() && op != "@")
        value.dtype = DtypeSet(promote(*left.dtype.single(), *other.dtype.single()));
      else if (other.is(Kind::Tensor) && !(left.dtype == other.dtype)) value.dtype = DtypeSet::unknown();
    } else if (left.is(Kind::List) && other.is(Kind::List) && op == "+") {
      value = concatenated(left, other);
    } else if (left.is(Kind::Number) && other.is(Kind::Number)) {
      value = left;
      if (op == "+") value.number += other.number;
      else if (op == "-") value.number -= other.number;
      else if (op == "*") value.number *= other.number;
      else value = Value::unknown();
    }
  } else {
    value = eval(right, state, frame);
  }
  assign(target, value, state, frame);
  // a = b = value
  if (right.is("assignment")) execAssignment(right, state, frame);
}

void Interpreter::assign(const Node& target, const Value& value, State& state, Frame& frame) {
  Value named = value;
  if (named.is(Kind::Tensor) && !target.is("pattern_list") && !target.is("tuple_pattern")) {
    named.description = describe(target);
    // `x = batch.half()`: the cast is where 'x' became Half.
    if (named.origin && named.origin->location.line == target.location().line &&
        named.origin->message.find(" became ") != std::string::npos)
      named.origin->message = named.description + named.origin->message.substr(named.origin->message.rfind(" became "));
  }
  if (named.is(Kind::Object)) {
    // An object is named after the first place that holds it: 'model', 'self.scaler'.
    if (auto it = state.heap.find(named.object); it != state.heap.end() && it->second.name.empty()) {
      const std::string name(target.text());
      it->second.name = "'" + name + "'";
      // A Sequential's layers by their index: 'model[0]'.
      for (size_t i = 0; i < it->second.children.size(); ++i)
        if (auto child = state.heap.find(it->second.children[i]);
            child != state.heap.end() && child->second.name.empty())
          child->second.name = fmt::format("'{}[{}]'", name, i);
    }
  }
  if (target.is("identifier")) {
    state.locals[std::string(target.text())] = named;
    for (bool ofNone : {false, true}) state.protocolSplits.erase(State::testKey(ofNone, 0, std::string(target.text())));
  } else if (target.is("attribute")) {
    const Value object = eval(target.field("object"), state, frame);
    if (object.is(Kind::Tensor) && object.parameterOf && target.field("attribute").text() == "requires_grad")
      setFrozen(object.parameterOf, named.truth() == false, target, state);
    if (object.is(Kind::Object))
      if (auto it = state.heap.find(object.object); it != state.heap.end()) {
        const std::string attribute(target.field("attribute").text());
        it->second.attributes[attribute] = named;
        for (bool ofNone : {false, true}) state.protocolSplits.erase(State::testKey(ofNone, object.object, attribute));
      }
    if (object.is(Kind::Dict))  // cfg.MODEL.HALF = True: an attribute dict's item
      if (Value* item = storage(target, state, frame)) storeInto(*item, named);
  } else if (target.is("pattern_list") || target.is("tuple_pattern") || target.is("list_pattern") ||
             target.is("tuple") || target.is("list")) {
    const auto targets = target.children();
    // q, k, v = x.split(n, dim=2): items alike, one standing for all.
    const bool alike = value.is(Kind::List) && value.itemsStandForMore && value.items.size() == 1;
    for (size_t i = 0; i < targets.size(); ++i)
      assign(targets[i],
             value.is(Kind::Tensor)                                         ? elementOf(value, state)
             : alike                                                        ? value.items.front()
             : value.is(Kind::List) && value.items.size() == targets.size() ? value.items[i]
                                                                            : Value::unknown(),
             state, frame);
  } else if (target.is("subscript")) {
    storeItem(target, named, state, frame);
  } else if (target.is("parenthesized_expression")) {
    for (const Node& child : target.children()) assign(child, value, state, frame);
  }
}

uint32_t Interpreter::unsetSettingTested(const Node& condition, State& state, Frame& frame) {
  if (condition.is("parenthesized_expression") || condition.is("boolean_operator") || condition.is("not_operator")) {
    for (const Node& part : condition.children())
      if (const uint32_t setting = unsetSettingTested(part, state, frame)) return setting;
    return 0;
  }
  Node tested = condition;
  if (condition.is("comparison_operator")) {
    const auto parts = condition.allChildren();
    if (parts.size() < 3 || parts.back().text() != "None") return 0;
    tested = parts.front();
  }
  if (!tested.is("identifier")) return 0;
  auto local = state.locals.find(std::string(tested.text()));
  if (local == state.locals.end() || !local->second.is(Kind::None)) return 0;
  return local->second.setting;
}

void Interpreter::takeBranch(const Node& condition, bool holds, State& state, Frame& frame) {
  if (condition.is("parenthesized_expression")) {
    for (const Node& child : condition.children()) takeBranch(child, holds, state, frame);
    return;
  }
  if (condition.is("not_operator")) return takeBranch(condition.field("argument"), !holds, state, frame);
  if (condition.is("boolean_operator")) {
    // Both sides hold where `a and b` does, neither where `a or b` fails.
    const std::string_view op = condition.field("operator").text();
    if ((op == "and") == holds) {
      takeBranch(condition.field("left"), holds, state, frame);
      takeBranch(condition.field("right"), holds, state, frame);
    }
    return;
  }
  Node tested = condition;
  bool ofNone = false;  // `x is None` / `x is not None`, else `x` tested for truth
  bool testHolds = holds;  // truthy, or not None
  if (condition.is("comparison_operator")) {
    const auto parts = condition.allChildren();
    if (parts.size() < 3 || parts.back().text() != "None") return;
    std::string op;
    for (size_t i = 1; i + 1 < parts.size(); ++i) op += (op.empty() ? "" : " ") + std::string(parts[i].text());
    if (op != "is" && op != "is not") return;
    tested = parts.front();
    ofNone = true;
    testHolds = (op == "is not") == holds;
  }
  // Only names and attribute chains of names: reading them again has no effect.
  for (Node n = tested; !n.is("identifier"); n = n.field("object"))
    if (!n.is("attribute")) return;
  ObjectId holder = 0;
  Value* stored = nullptr;
  std::string name;
  if (tested.is("identifier")) {
    name = std::string(tested.text());
    if (auto local = state.locals.find(name); local != state.locals.end()) stored = &local->second;
  } else {
    name = std::string(tested.field("attribute").text());
    const Value object = eval(tested.field("object"), state, frame);
    if (auto it = object.is(Kind::Object) ? state.heap.find(object.object) : state.heap.end(); it != state.heap.end()) {
      holder = object.object;
      if (auto attribute = it->second.attributes.find(name); attribute != it->second.attributes.end())
        stored = &attribute->second;
    }
  }
  if (!stored) return;
  if (const ScalerProtocol* protocol = state.protocolWhere(State::testKey(ofNone, holder, name), testHolds))
    state.protocol = *protocol;
  if (!stored->is(Kind::Unknown)) return;
  if (ofNone && !testHolds) {
    const uint32_t setting = stored->setting;
    *stored = Value::none();
    stored->setting = setting;
  } else if (ofNone) {
    stored->knownNotNone = true;
  } else {
    stored->knownTruth = testHolds;
    stored->knownNotNone = stored->knownNotNone || testHolds;
  }
}

void Interpreter::execIf(const Node& statement, State& state, Frame& frame) {
  const Node condition = statement.field("condition");
  const auto truth = test(eval(condition, state, frame));
  std::vector<Node> alternatives;
  for (const Node& child : statement.children())
    if (child.is("elif_clause") || child.is("else_clause")) alternatives.push_back(child);
  if (truth == true) return execBlock(statement.field("consequence"), state, frame);
  State otherwise = state;
  if (!truth) {
    takeBranch(condition, true, state, frame);
    takeBranch(condition, false, otherwise, frame);
  }
  if (truth != false) {
    execBlock(statement.field("consequence"), state, frame);
  } else {
    state.reached = false;
  }
  // The rest of the chain, as a nested if on the path where the condition failed.
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const Node& clause = alternatives[i];
    if (!otherwise.reached) break;
    if (clause.is("else_clause")) {
      execBlock(clause.field("body"), otherwise, frame);
      state.join(otherwise);
      return;
    }
    const auto clauseTruth = test(eval(clause.field("condition"), otherwise, frame));
    if (clauseTruth == false) continue;
    State taken = otherwise;
    if (!clauseTruth) {
      takeBranch(clause.field("condition"), true, taken, frame);
      takeBranch(clause.field("condition"), false, otherwise, frame);
    }
    execBlock(clause.field("consequence"), taken, frame);
    state.join(taken);
    if (clauseTruth == true) return;
  }
  state.join(otherwise);
}

std::vector<Value> Interpreter::loopPasses(const Value& iterable, const State& state) const {
  // Whether an item is an object, and a module: nullopt for other values.
  const auto isModule = [&](const Value& item) -> std::optional<bool> {
    auto object = item.is(Kind::Object) ? state.heap.find(item.object) : state.heap.end();
    return object == state.heap.end() ? std::nullopt : std::optional(object->second.isModule);
  };
  const auto& items = iterable.items;
  // Objects other than modules, a few for all (callbacks a comprehension
  // built): each pass is another object, so one stands for them; two would
  // run one callback's hook twice.
  if (iterable.is(Kind::List) && iterable.itemsStandForMore && !items.empty() &&
      std::all_of(items.begin(), items.end(), [&](const Value& item) { return isModule(item) == false; }))
    return {elementOf(iterable, state)};
  // `for k, v in cfg.items()`, `for key in cfg`: a config's entries, by name.
  const auto isEntry = [](const Value& item) {
    return item.is(Kind::String) || (item.is(Kind::List) && item.items.size() == 2 && item.items[0].is(Kind::String));
  };
  if (iterable.is(Kind::List) && !iterable.itemsStandForMore && !items.empty() &&
      (items.size() <= kItemsIteratedOneByOne ||
       (items.size() <= kEntriesIteratedOneByOne && std::all_of(items.begin(), items.end(), isEntry)) ||
       // model.modules(): each module in turn, up to a longer list.
       (items.size() <= kModulesIteratedOneByOne &&
        std::all_of(items.begin(), items.end(), [&](const Value& item) { return isModule(item) == true; }))))
    return items;
  return std::vector<Value>(2, elementOf(iterable, state));
}

void Interpreter::execLoop(const Node& statement, State& state, Frame& frame) {
  const bool isFor = statement.is("for_statement");
  // The element each pass binds. The body runs twice: the second pass sees
  // what the first left (a protocol call repeated every iteration). A list
  // whose items are known (for opt in self._optimizers, for opt in (enc_opt,
  // dec_opt)) runs once per item instead, so the one optimizer in it is
  // unscaled once. Paths leave by break, or by the loop's end.
  std::vector<Value> passes(2, Value::unknown());
  if (isFor) {
    passes = loopPasses(iterated(eval(statement.field("right"), state, frame), state), state);
  } else {
    const auto truth = test(eval(statement.field("condition"), state, frame));
    if (truth == false) return;
  }
  std::vector<State> breaks, continues;
  auto* savedBreaks = frame.breaks;
  auto* savedContinues = frame.continues;
  frame.breaks = &breaks;
  frame.continues = &continues;
  // `while True:` leaves by break only; `while not done:` with done False at first is left when done turns.
  const Node condition = isFor ? Node() : statement.field("condition");
  const bool endless = condition && (condition.is("true") || (condition.is("integer") && condition.text() != "0"));
  ++loopLevel_;
  for (const Value& element : passes) {
    if (!state.reached) break;
    state.changeProtocols([&](ScalerProtocol& p) { p.beginPass(loopLevel_); });
    if (isFor) assign(statement.field("left"), element, state, frame);
    execBlock(statement.field("body"), state, frame);
    for (const State& c : continues) state.join(c);
    continues.clear();
    if (!isFor && !endless) eval(statement.field("condition"), state, frame);
  }
  --loopLevel_;
  frame.breaks = savedBreaks;
  frame.continues = savedContinues;
  if (endless) state.reached = false;
  for (const State& b : breaks) state.join(b);
  state.changeProtocols([](ScalerProtocol& p) { p.leaveLoop(); });
}

void Interpreter::execWith(const Node& statement, State& state, Frame& frame) {
  std::vector<AutocastState> saved;
  std::vector<Value> regions;
  std::vector<std::tuple<Value, const FunctionInfo*, Node>> exits;
  const Node clause = statement.children().empty() ? Node() : statement.children().front();
  for (const Node& item : clause.children()) {
    if (!item.is("with_item")) continue;
    Node value = item.field("value");
    Node alias;
    if (value.is("as_pattern")) {
      alias = value.field("alias");
      value = value.children().empty() ? Node() : value.children().front();
    }
    Value v = eval(value, state, frame);
    if (v.is(Kind::Autocast)) {
      saved.emplace_back();
      enterAutocast(v, value, state, saved.back());
      regions.push_back(v);
    }
    // A context manager of the analyzed code (a hand-written autocast guard):
    // its __enter__ now, its __exit__ after the body.
    if (auto object = v.is(Kind::Object) ? state.heap.find(v.object) : state.heap.end();
        object != state.heap.end() && object->second.cls) {
      const ClassInfo& cls = *object->second.cls;
      const Value manager = v;
      if (const FunctionInfo* enter = findMethod(cls, "__enter__")) {
        Call entering;
        entering.node = value;
        v = callFunction(*enter, manager, entering, state, frame);
      }
      if (const FunctionInfo* exit = findMethod(cls, "__exit__")) exits.emplace_back(manager, exit, value);
    }
    if (alias) {
      for (const Node& target : alias.children()) assign(target, v, state, frame);
      if (alias.is("identifier")) assign(alias, v, state, frame);
    }
  }
  for (const AutocastState& outside : saved) frame.openRegions.push_back(&outside);
  execBlock(statement.field("body"), state, frame);
  frame.openRegions.resize(frame.openRegions.size() - saved.size());
  for (auto it = exits.rbegin(); it != exits.rend() && state.reached; ++it) {
    const auto& [manager, exit, at] = *it;
    Call leaving;
    leaving.node = at;
    leaving.args = {Value::none(), Value::none(), Value::none()};
    callFunction(*exit, manager, leaving, state, frame);
  }
  // Leaving the regions, innermost first; a return or break inside leaves them too.
  while (!saved.empty()) {
    if (state.reached) leaveAutocast(saved.back(), state);
    saved.pop_back();
  }
}

void Interpreter::leaveAutocast(const AutocastState& saved, State& state) {
  if (state.autocast.anyOn()) state.bfloat16Loss.regionLeft(state.autocast);
  state.autocast = saved;
  if (state.autocastRegions > 0 && --state.autocastRegions == 0 && !state.autocastBySetter) {
    state.autocastCache = AutocastCacheState{};
    state.stepInRegion.reset();  // no forward used the stale copies
  }
}

void Interpreter::enterAutocast(const Value& region, const Node& at, State& state, AutocastState& saved) {
  saved = state.autocast;
  ++state.autocastRegions;
  // nullcontext(): nothing changes; autocast(enabled=False): the device's autocast is off inside.
  if (region.enabled == Tristate::Off && region.text.empty() && region.dtype.isBottom() && !region.flag) return;
  auto set = [&](DeviceAutocast& device, DtypeSet defaultDtype) {
    device.enabled = region.enabled;
    device.dtype = region.dtype.isBottom() ? defaultDtype : region.dtype;
    device.enabledAt = at.location();
  };
  if (region.text != "cpu") set(state.autocast.cuda, DtypeSet(ScalarType::Half));
  if (region.text != "cuda") set(state.autocast.cpu, DtypeSet(ScalarType::BFloat16));
  if (region.enabled == Tristate::On) state.bfloat16Loss.regionEntered();
}

void Interpreter::execTry(const Node& statement, State& state, Frame& frame) {
  const State entry = state;
  execBlock(statement.field("body"), state, frame);
  Node finally;
  for (const Node& clause : statement.children()) {
    if (clause.is("else_clause")) {
      if (state.reached) execBlock(clause.field("body"), state, frame);
    } else if (clause.is("except_clause") || clause.is("except_group_clause")) {
      // The handler runs from where the body may have raised: its start is the one state known.
      State handler = entry;
      for (const Node& child : clause.children())
        if (child.is("block")) execBlock(child, handler, frame);
      state.join(handler);
    } else if (clause.is("finally_clause")) {
      finally = clause;
    }
  }
  if (finally)
    for (const Node& child : finally.children())
      if (child.is("block")) execBlock(child, state, frame);
}

// Globals a call or an import stored into (a registry's dict a decorator
// fills): the top level running sees them.
void Interpreter::adoptGlobalStores(State& state, const Frame& frame) {
  if (frame.topLevel)
    for (const auto& [module, name] : globalStores_)
      if (module == frame.module) state.locals[name] = module->globals.at(name);
}

void Interpreter::execImport(const Node& statement, State& state, Frame& frame) {
  // A file that imports the one importing it (a package's __init__ importing
  // its models, which import register_model from it) sees what is defined so far.
  if (frame.topLevel) frame.module->globals = state.locals;
  execImportOf(statement, state, frame);
  adoptGlobalStores(state, frame);
}

void Interpreter::execImportOf(const Node& statement, State& state, Frame& frame) {
  const std::string& importer = frame.module->source->path();
  auto bindModule = [&](const std::string& dotted, int levels) -> Value {
    const std::string path = resolveImport(importer, dotted, levels);
    if (path.empty()) return Value::name(dotted);
    return importFile(path, *frame.module) ? Value::name("file:" + path) : Value::unknown();
  };
  if (statement.is("import_statement")) {
    for (const Node& name : statement.children()) {
      if (name.is("aliased_import")) {
        const std::string dotted(name.field("name").text());
        state.locals[std::string(name.field("alias").text())] = bindModule(dotted, 0);
      } else {
        // import torch.nn: binds `torch`.
        const std::string dotted(name.text());
        const std::string head = dotted.substr(0, dotted.find('.'));
        const Value bound = bindModule(dotted, 0);
        state.locals[head] = bound.text.rfind("file:", 0) == 0 && head == dotted ? bound : Value::name(head);
      }
    }
    return;
  }
  // from X import a, b as c
  const Node moduleName = statement.field("module_name");
  std::string dotted(moduleName.text());
  int levels = 0;
  if (moduleName.is("relative_import")) {
    const size_t dots = std::min(dotted.find_first_not_of('.'), dotted.size());  // from ..pkg: two levels up
    levels = static_cast<int>(dots);
    dotted = dotted.substr(dots);
  }
  const std::string path = resolveImport(importer, dotted, levels);
  ModuleFile* module = path.empty() ? nullptr : importFile(path, *frame.module);
  for (const Node& name : statement.children()) {
    if (name == moduleName) continue;
    Node imported = name, alias = name;
    if (name.is("aliased_import")) {
      imported = name.field("name");
      alias = name.field("alias");
    }
    if (!imported.is("dotted_name") && !imported.is("identifier")) continue;
    const std::string what(imported.text());
    Value value;
    if (module) {
      if (auto global = importedGlobal(*module, what, state)) {
        value = *global;
      } else if (const std::string sub = resolveImport(path, what, 1); !sub.empty() && importFile(sub, *frame.module)) {
        value = Value::name("file:" + sub);  // from pkg import submodule
      }
    } else if (const std::string sub = dotted.empty() && levels > 0 ? resolveImport(importer, what, levels) : "";
               !sub.empty() && importFile(sub, *frame.module)) {
      value = Value::name("file:" + sub);  // from . import submodule, in a directory with no __init__.py
    } else if (path.empty()) {
      value = Value::name(dotted.empty() ? what : dotted + "." + what);
    }
    state.locals[std::string(alias.text())] = value;
  }
}

// A def or a lambda, once per definition; its value where it is evaluated
// (a closure over the enclosing function's variables).
Value Interpreter::functionValue(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame) {
  const auto key = std::pair{&definition.file(), definition.startByte()};
  FunctionInfo*& info = functionsByNode_[key];
  if (!info) {
    auto owned = std::make_unique<FunctionInfo>();
    owned->definition = definition;
    owned->decorators = std::move(decorators);
    owned->module = frame.module;
    owned->name = definition.is("lambda") ? "<lambda>" : std::string(definition.field("name").text());
    owned->isGenerator = !definition.is("lambda") && yields(definition.field("body"));
    info = owned.get();
    frame.module->functions.push_back(std::move(owned));
  }
  Value v = Value::make(Kind::Function);
  v.function = info;
  if (!frame.topLevel) v.captured = std::make_shared<const std::map<std::string, Value>>(state.locals);
  return v;
}

void Interpreter::defineFunction(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame) {
  Value v = functionValue(definition, std::move(decorators), state, frame);
  state.locals[v.function->name] = v;
  runUserDecorators(v.function->decorators, v, state, frame);
}

// MODELS[name] = fn, cfg["SOLVER"]["AMP"] = flag: an item of a dict where
// storage() finds one. Other stores are not followed.
void Interpreter::storeItem(const Node& target, const Value& value, State& state, Frame& frame) {
  const Node containerNode = target.field("value");
  // model[0] = LoRALinear(model[0]): a Sequential's or ModuleList's module swapped.
  if (const Value container = eval(containerNode, state, frame); container.is(Kind::Object) && value.is(Kind::Object))
    if (auto it = state.heap.find(container.object);
        it != state.heap.end() && it->second.type == Object::Type::Container) {
      const Value key = eval(target.field("subscript"), state, frame);
      if (key.is(Kind::Number) && key.number >= 0 && key.number < it->second.children.size())
        it->second.children[static_cast<size_t>(key.number)] = value.object;
      return;
    }
  if (Value* item = storage(target, state, frame)) storeInto(*item, value);
}

// Where the value an expression names is kept, to store into it: a variable
// (a module's global, for a registry a function fills), an object's
// attribute, a dict's item by a known key (`cfg["SOLVER"]`, `cfg.SOLVER` of
// an attribute dict, `cfg.setdefault("SOLVER", {})`, added where missing).
// Null where it is not followed: an unknown key.
Value* Interpreter::storage(const Node& expression, State& state, Frame& frame) {
  if (expression.is("identifier")) {
    const std::string name(expression.text());
    if (auto local = state.locals.find(name); local != state.locals.end()) return &local->second;
    if (auto global = frame.module->globals.find(name); !frame.topLevel && global != frame.module->globals.end()) {
      globalStores_.emplace(frame.module, name);
      return &global->second;
    }
    return nullptr;
  }
  Node containerNode;
  Value key;
  Value missing = Value::unknown();
  if (expression.is("attribute")) {
    containerNode = expression.field("object");
    key = Value::string(std::string(expression.field("attribute").text()));
    if (const Value object = eval(containerNode, state, frame); object.is(Kind::Object)) {
      auto it = state.heap.find(object.object);
      return it == state.heap.end() ? nullptr : &it->second.attributes[key.text];
    }
  } else if (expression.is("subscript")) {
    containerNode = expression.field("value");
    key = eval(expression.field("subscript"), state, frame);
  } else if (expression.is("call") && expression.field("function").is("attribute") &&
             expression.field("function").field("attribute").text() == "setdefault") {
    containerNode = expression.field("function").field("object");
    std::vector<Node> arguments;
    for (const Node& argument : expression.field("arguments").children())
      if (!argument.is("keyword_argument")) arguments.push_back(argument);
    if (arguments.empty()) return nullptr;
    key = eval(arguments[0], state, frame);
    missing = arguments.size() > 1 ? eval(arguments[1], state, frame) : Value::none();
  } else {
    return nullptr;
  }
  Value* dict = storage(containerNode, state, frame);
  if (!dict || !dict->is(Kind::Dict)) return nullptr;
  if (key.is(Kind::String) || key.is(Kind::Number)) return &itemOf(*dict, std::move(key), std::move(missing));
  // groups[(layer_id, no_wd)] = {"params": []}: a key known only at run time; one item stands for all.
  if (dict->fromConfigFile) return nullptr;
  dict->itemsStandForMore = true;
  for (size_t i = 0; i < dict->keys.size(); ++i)
    if (dict->keys[i].is(Kind::Unknown)) return &dict->items[i];
  dict->keys.push_back(Value::unknown());
  dict->items.push_back(std::move(missing));
  return &dict->items.back();
}

// @register("tc_resnet") above a def or class: a decorator of the analyzed
// code runs, for what it does (a registry's `MODELS[name] = fn`); the name
// keeps the function or class (a decorator that wraps it calls it).
void Interpreter::runUserDecorators(const std::vector<Node>& decorators, const Value& decorated, State& state,
                                    Frame& frame) {
  for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
    const auto children = it->children();
    if (children.empty()) continue;
    const Node expression = children.front();
    const Node callee = expression.is("call") ? expression.field("function") : expression;
    if (!callee.is("identifier") && !callee.is("attribute")) continue;
    if (eval(callee, state, frame).kind != Kind::Function) continue;  // library decorators are modelled by name
    const Value decorator = eval(expression, state, frame);
    if (!decorator.is(Kind::Function)) continue;
    Call call;
    call.node = expression;
    call.args = {decorated};
    call.argNodes = {Node()};
    call.captured = decorator.captured;
    callFunction(*decorator.function, std::nullopt, call, state, frame);
  }
}

void Interpreter::defineClass(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame) {
  const auto key = std::pair{&definition.file(), definition.startByte()};
  ClassInfo*& info = classesByNode_[key];
  if (!info) {
    auto owned = std::make_unique<ClassInfo>();
    owned->definition = definition;
    owned->module = frame.module;
    owned->name = std::string(definition.field("name").text());
    for (const Node& decorator : decorators)
      if (decorator.text().find("dataclass") != std::string_view::npos) owned->isDataclass = true;
    for (const Node& base : definition.field("superclasses").children())
      if (!base.is("keyword_argument")) owned->bases.push_back(eval(base, state, frame));
    for (const Node& member : definition.field("body").children()) {
      Node function = member;
      std::vector<Node> memberDecorators;
      if (member.is("decorated_definition")) {
        for (const Node& child : member.children())
          if (child.is("decorator")) memberDecorators.push_back(child);
        function = member.field("definition");
      }
      if (function.is("function_definition")) {
        auto method = std::make_unique<FunctionInfo>();
        method->definition = function;
        method->decorators = std::move(memberDecorators);
        method->module = frame.module;
        method->owner = owned.get();
        method->name = std::string(function.field("name").text());
        method->isGenerator = yields(function.field("body"));
        owned->methods[method->name] = method.get();
        functionsByNode_[{&function.file(), function.startByte()}] = method.get();
        frame.module->functions.push_back(std::move(method));
      } else if (member.is("expression_statement")) {
        for (const Node& child : member.children()) {
          if (!child.is("assignment")) continue;
          const Node left = child.field("left");
          if (!left.is("identifier")) continue;
          const std::string field(left.text());
          if (child.field("type")) owned->fields.push_back(field);
          if (const Node right = child.field("right")) owned->attributes[field] = right;
          if (field.front() != '_') owned->enumMembers.push_back(field);
        }
      }
    }
    static constexpr std::array kEnumBases{"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"};
    if (std::none_of(kEnumBases.begin(), kEnumBases.end(), [&](const char* base) { return derivesFrom(*owned, base); }))
      owned->enumMembers.clear();
    info = owned.get();
    frame.module->classes.push_back(std::move(owned));
  }
  state.locals[info->name] = Value::ofClass(info);
  runUserDecorators(decorators, Value::ofClass(info), state, frame);
}

// ---------------------------------------------------------------------------
// Expressions.

std::string Interpreter::describe(const Node& expression) {
  const std::string_view text = expression.text();
  if (text.size() <= 40 && text.find('\n') == std::string_view::npos) return "'" + std::string(text) + "'";
  return "the " + std::string(expression.kind() == "call" ? "call's result" : "expression");
}

namespace {

// A value the program names for a setting: a constant, once (at most 8).
// An unknown value stands for "given" of a setting whose default is None,
// and for "another" of a string setting.
void addNamedValue(Setting& setting, const Value& value) {
  const bool given =
      value.is(Kind::Unknown) && (setting.values.front().is(Kind::None) || setting.values.front().is(Kind::String));
  const bool constant =
      value.is(Kind::String) || value.is(Kind::Number) || value.is(Kind::Bool) || value.is(Kind::None) || given;
  if (!constant || setting.values.size() >= 8) return;
  if (std::any_of(setting.values.begin(), setting.values.end(),
                  [&](const Value& v) { return given ? v.is(Kind::Unknown) : v.sameConstant(value); }))
    return;
  Value named = value;
  named.setting = 0;
  named.description.clear();
  setting.values.push_back(std::move(named));
}

// int("0"), float(os.environ.get("LR", "1e-3")), cfg.getfloat(...): a number
// from a numeric string, still the setting it was read from.
Value asNumber(Value number) {
  if (number.is(Kind::String)) {
    try {
      size_t used = 0;
      number.number = std::stod(number.text, &used);
      if (used != number.text.size()) return Value::unknown();
    } catch (...) {
      return Value::unknown();
    }
    number.kind = Kind::Number;
    number.text.clear();
  }
  return number.is(Kind::Number) ? number : Value::unknown();
}

// The math module's functions of numbers the analysis knows.
std::optional<double> mathFunction(const std::string& function, const std::vector<Value>& args) {
  const double x = args.front().number;
  if (args.size() == 1) {
    if (function == "sqrt" && x >= 0) return std::sqrt(x);
    if (function == "log" && x > 0) return std::log(x);
    if (function == "log2" && x > 0) return std::log2(x);
    if (function == "exp") return std::exp(x);
    if (function == "cos") return std::cos(x);
    if (function == "sin") return std::sin(x);
    if (function == "ceil") return std::ceil(x);
    if (function == "floor") return std::floor(x);
  }
  if (args.size() == 2 && function == "pow") return std::pow(x, args[1].number);
  if (args.size() == 2 && function == "log" && x > 0 && args[1].number > 0)
    return std::log(x) / std::log(args[1].number);
  return std::nullopt;
}

// configparser's getint/getfloat/getboolean of what get() gives.
Value iniConverted(const std::string& method, Value value) {
  if (method == "getint" || method == "getfloat") return asNumber(std::move(value));
  if (method == "getboolean" && value.is(Kind::String)) {
    std::string text = value.text;
    std::transform(text.begin(), text.end(), text.begin(), ::tolower);
    const bool yes = text == "1" || text == "yes" || text == "true" || text == "on";
    const bool no = text == "0" || text == "no" || text == "false" || text == "off";
    if (!yes && !no) return Value::unknown();
    value.kind = Kind::Bool;
    value.flag = yes;
    value.text.clear();
  }
  return value;
}

// The innermost if, match or conditional expression around `node` in its
// function: where it runs only on some paths.
std::optional<SourceLocation> enclosingBranch(const Node& node) {
  for (Node up = node.parent(); up && !up.is("function_definition"); up = up.parent())
    if (up.is("if_statement") || up.is("match_statement") || up.is("conditional_expression")) return up.location();
  return std::nullopt;
}

bool isIniGetter(const std::string& method) {
  return method == "get" || method == "getint" || method == "getfloat" || method == "getboolean";
}

}  // namespace

Value Interpreter::readSetting(const std::string& spelling, const Node& at, Value byDefault,
                               const std::vector<Value>& named) {
  // Per program: two scripts of one directory may spell different settings alike.
  const std::string program = root_ ? root_->source->path() : "";
  auto it = std::find_if(settings_.begin(), settings_.end(),
                         [&](const Setting& s) { return s.spelling == spelling && s.program == program; });
  if (it == settings_.end()) {
    byDefault.setting = 0;
    settings_.push_back(Setting{spelling, at.location(), {byDefault}, program});
    it = std::prev(settings_.end());
  }
  for (const Value& v : named) addNamedValue(*it, v);
  it->choicesClosed = it->choicesClosed || !named.empty();
  Value value = byDefault;
  if (auto configured = configuration_.find(spelling); configured != configuration_.end()) value = configured->second;
  // Another string than those the program names: unequal to each of them (its `else` branch), no number.
  if (value.is(Kind::Unknown) && it->values.front().is(Kind::String) && configuration_.count(spelling))
    value = Value::string("\x1f(another value)");
  value.setting = static_cast<uint32_t>(it - settings_.begin()) + 1;
  return value;
}

Value Interpreter::configSetting(const Value& config, const Value& key, const Node& at, const Value* byDefault) {
  const std::string name = config.description.empty() ? key.text : config.description + "." + key.text;
  const std::string spelling =
      config.text.empty() ? fmt::format("config key \"{}\"", name) : fmt::format("{} in {}", name, config.text);
  for (size_t i = 0; i < config.keys.size(); ++i)
    if (config.keys[i].sameConstant(key))
      return config.items[i].setByProgram ? config.items[i] : readSetting(spelling, at, config.items[i]);
  return readSetting(spelling, at, byDefault ? *byDefault : Value::unknown());
}

Setting* Interpreter::settingOf(const Value& value) {
  return value.setting == 0 || value.setting > settings_.size() ? nullptr : &settings_[value.setting - 1];
}

void Interpreter::settingUsed(const Value& value, const std::vector<Value>& named, bool lookup) {
  Setting* read = settingOf(value);
  if (!read) return;
  Setting& setting = *read;
  setting.decides = true;
  setting.choosesByLookup = setting.choosesByLookup || lookup;
  for (const Value& v : named) addNamedValue(setting, v);
  // A flag: both truths; a number tested for truth (`if args.clip_grad:`): zero and not; None: given too.
  if (named.empty() && setting.values.front().is(Kind::Bool))
    addNamedValue(setting, Value::boolean(!setting.values.front().flag));
  // None: given too, unless the choices (argparse's) name every given value.
  if (named.empty() && setting.values.front().is(Kind::None) && !setting.choicesClosed)
    addNamedValue(setting, Value::unknown());
  if (named.empty() && setting.values.front().is(Kind::Number)) {
    addNamedValue(setting, Value::numeric(setting.values.front().number == 0 ? 1 : 0));
  }
  // A number compared only with its default (`if args.static_loss_scale != 1.0:`): another value too.
  if (!named.empty() && !setting.choicesClosed && setting.values.size() == 1 &&
      setting.values.front().is(Kind::Number) &&
      std::all_of(named.begin(), named.end(), [&](const Value& v) { return v.sameConstant(setting.values.front()); }))
    addNamedValue(setting, Value::numeric(setting.values.front().number == 0 ? 1 : 2 * setting.values.front().number));
  // A free string tested, or compared with constants (`spec == "none"`, `spec == "dynamic"`, else
  // `float(spec)`): any other value too, which no comparison names.
  // Not one looked up in a dict (PRECISIONS[cfg["precision"]]): any other raises KeyError there.
  if (!setting.choicesClosed && !setting.choosesByLookup && setting.values.front().is(Kind::String) &&
      (setting.values.size() == 1 || !named.empty()))
    addNamedValue(setting, Value::unknown());
  if (setting.choosesByLookup && setting.values.front().is(Kind::String))
    std::erase_if(setting.values, [](const Value& v) { return v.is(Kind::Unknown); });
}

void Interpreter::dtypeChosenBy(const Value& key, const Value& dict) {
  Setting* setting = settingOf(key);
  if (setting &&
      std::any_of(dict.items.begin(), dict.items.end(), [](const Value& item) { return item.is(Kind::Dtype); }))
    setting->choosesDtype = true;
}

std::optional<bool> Interpreter::test(const Value& condition) {
  settingUsed(condition);
  return condition.truth();
}

Value Interpreter::lookup(const std::string& name, State& state, Frame& frame) {
  if (auto it = state.locals.find(name); it != state.locals.end()) return it->second;
  if (!frame.topLevel)
    if (auto it = frame.module->globals.find(name); it != frame.module->globals.end()) return it->second;
  if (name == "True" || name == "False") return Value::boolean(name == "True");
  if (name == "__file__") {
    std::error_code error;
    return Value::string(fs::absolute(frame.module->source->path(), error).string());
  }
  if (name == "None") return Value::none();
  return Value::name(name);  // a builtin: print, len, getattr, isinstance...
}

Value Interpreter::eval(const Node& expression, State& state, Frame& frame) {
  if (!expression || !state.reached) return {};
  // Expressions nested deeper than code is written (generated or hostile
  // input) are not followed: the evaluation recurses.
  if (evalDepth_ >= kMaxExpressionDepth) return {};
  ++evalDepth_;
  Value value = evalExpression(expression, state, frame);
  --evalDepth_;
  return value;
}

Value Interpreter::evalExpression(const Node& expression, State& state, Frame& frame) {
  const std::string_view kind = expression.kind();
  if (kind == "identifier") return lookup(std::string(expression.text()), state, frame);
  if (kind == "attribute") return evalAttribute(expression, state, frame);
  if (kind == "call") return evalCall(expression, state, frame);
  if (kind == "binary_operator") return evalBinary(expression, state, frame);
  if (kind == "comparison_operator") return evalComparison(expression, state, frame);
  if (kind == "subscript") return evalSubscript(expression, state, frame);
  if (kind == "parenthesized_expression") {
    auto children = expression.children();
    return children.empty() ? Value::unknown() : eval(children.front(), state, frame);
  }
  if (kind == "string") {
    // f"SR_{name}": the text, where each interpolation is a known string or number.
    bool interpolated = false, known = true;
    std::string text;
    for (const Node& part : expression.children()) {
      if (part.is("string_content")) text += part.text();
      if (part.is("escape_sequence")) known = false;
      if (!part.is("interpolation")) continue;
      interpolated = true;
      const Node inner = part.field("expression");
      const Value v = inner ? eval(inner, state, frame) : Value::unknown();
      if (part.field("format_specifier") || part.field("type_conversion")) known = false;
      else if (v.is(Kind::String)) text += v.text;
      else if (v.is(Kind::Number) && v.number == std::floor(v.number)) text += fmt::format("{}", v.number);
      else known = false;
    }
    if (interpolated) return known ? Value::string(text) : Value::unknown();
    if (expression.children().size() > 3) return Value::unknown();
    return Value::string(unquote(expression.text()));
  }
  if (kind == "integer" || kind == "float") {
    Value v = Value::make(Kind::Number);
    std::string digits(expression.text());
    digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
    try {
      v.number = std::stod(digits);
    } catch (...) {
      return Value::unknown();
    }
    return v;
  }
  if (kind == "true" || kind == "false") return Value::boolean(kind == "true");
  if (kind == "none") return Value::none();
  if (kind == "unary_operator") {
    Value operand = eval(expression.field("argument"), state, frame);
    if (operand.is(Kind::Number) && expression.field("operator").text() == "-") operand.number = -operand.number;
    return operand.is(Kind::Number) || operand.is(Kind::Tensor) ? operand : Value::unknown();
  }
  if (kind == "not_operator") {
    const auto truth = test(eval(expression.field("argument"), state, frame));
    return truth ? Value::boolean(!*truth) : Value::unknown();
  }
  if (kind == "boolean_operator") {
    const Value left = eval(expression.field("left"), state, frame);
    const bool isAnd = expression.field("operator").text() == "and";
    const auto truth = test(left);
    if (truth && *truth != isAnd) return left;  // short circuit
    const Value right = eval(expression.field("right"), state, frame);
    if (truth) return right;
    return test(right) == !isAnd ? right : Value::unknown();
  }
  if (kind == "conditional_expression") {
    auto parts = expression.children();
    if (parts.size() != 3) return Value::unknown();
    const auto truth = test(eval(parts[1], state, frame));
    if (truth) {
      Value taken = eval(parts[*truth ? 0 : 2], state, frame);
      // `default if raw is None else cast(raw)` of an unset variable: the
      // default stands for that setting (its other values are the program's).
      if ((taken.is(Kind::String) || taken.is(Kind::Number) || taken.is(Kind::Bool)) && !taken.setting)
        taken.setting = unsetSettingTested(parts[1], state, frame);
      return taken;
    }
    const Value whenTrue = eval(parts[0], state, frame), whenFalse = eval(parts[2], state, frame);
    // `sys.argv[1] if len(sys.argv) > 1 else "lit.yaml"`: a setting of the command line, the literal its default.
    for (const auto& [read, literal, readNode] :
         {std::tuple(whenTrue, whenFalse, parts[0]), std::tuple(whenFalse, whenTrue, parts[2])})
      if (read.is(Kind::Unknown) && !read.setting && literal.is(Kind::String) && !literal.setting &&
          readNode.text().find("sys.argv") != std::string_view::npos)
        return readSetting(std::string(readNode.text()), readNode, literal);
    return joinValues(whenTrue, whenFalse);
  }
  if (kind == "list" || kind == "tuple" || kind == "expression_list") {
    Value v = Value::make(Kind::List);
    for (const Node& item : expression.children()) v.items.push_back(eval(item, state, frame));
    return v;
  }
  if (kind == "dictionary") {
    // {**DEFAULTS, **json.load(f)}: a config file's keys over the defaults,
    // each a setting of that file (a default's key too: the file may set it).
    Value v = Value::make(Kind::Dict);
    for (const Node& pair : expression.children()) {
      if (pair.is("dictionary_splat")) {
        const Value spread = eval(pair.children().empty() ? Node() : pair.children().front(), state, frame);
        if (!spread.is(Kind::Dict)) return Value::unknown();
        if (spread.fromConfigFile) {
          v.fromConfigFile = true;
          v.text = spread.text;
          v.description = spread.description;
        }
        for (size_t i = 0; i < spread.keys.size(); ++i) {
          Value& item = itemOf(v, spread.keys[i]);
          item = spread.items[i];
          item.setByProgram = v.fromConfigFile && !spread.fromConfigFile;
        }
        continue;
      }
      if (!pair.is("pair")) return Value::unknown();
      Value& item = itemOf(v, eval(pair.field("key"), state, frame));
      item = eval(pair.field("value"), state, frame);
      item.setByProgram = v.fromConfigFile;
    }
    return v;
  }
  if (kind == "dictionary_comprehension") {
    if (auto filtered = filteredDict(expression, state, frame)) return *filtered;
    if (auto mapped = mappedDict(expression, state, frame)) return *mapped;
  }
  if (kind == "list_comprehension" || kind == "generator_expression" || kind == "set_comprehension" ||
      kind == "dictionary_comprehension") {
    // Once, on one element standing for all; its names are the comprehension's own. A body that calls
    // something ([self.train_step(x) for x in loader]) runs as a loop's does, once per pass.
    std::map<std::string, std::optional<Value>> shadowed;
    std::optional<Value> filtered;
    const Node body = expression.field("body");
    const auto clauses = expression.children();
    const bool oneLoop =
        std::count_if(clauses.begin(), clauses.end(), [](const Node& c) { return c.is("for_in_clause"); }) == 1;
    std::vector<Value> passes;
    Node loopTarget;
    for (const Node& clause : clauses) {
      if (clause.is("for_in_clause")) {
        Value iterable = iterated(eval(clause.field("right"), state, frame), state);
        if (oneLoop && kind != "dictionary_comprehension" && containsCall(body)) {
          passes = loopPasses(iterable, state);
          loopTarget = clause.field("left");
        }
        // [p for p in model.parameters() if p.requires_grad]: the parameters it
        // filters (not [p.float() for p in ...]: new tensors).
        const Node target = clause.field("left");
        const auto names = target.is("identifier") ? std::vector<Node>{target} : target.children();
        if (iterable.is(Kind::Parameters) && !filtered && body.is("identifier") && !names.empty() &&
            names.back().text() == body.text()) {
          filtered = iterable;
          filtered->named = false;  // [p for n, p in model.named_parameters() if ...]
        }
        for (const Node& name : names) {
          const std::string text(name.text());
          if (!name.is("identifier") || shadowed.count(text)) continue;
          auto old = state.locals.find(text);
          shadowed[text] = old == state.locals.end() ? std::nullopt : std::optional<Value>(old->second);
        }
        assign(target, passes.empty() ? elementOf(iterable, state) : passes.front(), state, frame);
      } else if (clause.is("if_clause")) {
        for (const Node& condition : clause.children()) eval(condition, state, frame);
      }
    }
    // {n: p.detach().clone().to(dtype) for n, p in model.named_parameters()}: its
    // values alike, under keys not known (one Unknown key stands for them).
    // A body run once per pass is a loop's: each pass an iteration of its own.
    const auto beginPass = [&] { state.changeProtocols([&](ScalerProtocol& p) { p.beginPass(loopLevel_); }); };
    if (passes.size() > 1) {
      ++loopLevel_;
      beginPass();
    }
    Value item = Value::unknown();
    if (kind != "dictionary_comprehension") item = eval(body, state, frame);
    else if (body.is("pair")) item = eval(body.field("value"), state, frame);
    if (passes.size() > 1) {
      for (size_t pass = 1; pass < passes.size() && state.reached; ++pass) {
        beginPass();
        assign(loopTarget, passes[pass], state, frame);
        for (const Node& clause : clauses)
          if (clause.is("if_clause"))
            for (const Node& condition : clause.children()) eval(condition, state, frame);
        eval(body, state, frame);  // for what it does: the first pass's item stands for all
      }
      state.changeProtocols([](ScalerProtocol& p) { p.leaveLoop(); });
      --loopLevel_;
    }
    for (const auto& [name, old] : shadowed) {
      if (old) state.locals[name] = *old;
      else state.locals.erase(name);
    }
    if (filtered) return *filtered;
    if (kind == "dictionary_comprehension" && !item.is(Kind::Unknown)) {
      Value dict = Value::make(Kind::Dict);
      dict.keys = {Value::unknown()};
      dict.items = {item};
      return dict;
    }
    Value list = Value::make(Kind::List);
    list.items = {item};
    list.itemsStandForMore = true;
    // A generator stands for the list it yields (ModuleList(Block() for _ in range(n))).
    return kind == "list_comprehension" || kind == "generator_expression" ? list : Value::unknown();
  }
  if (kind == "lambda") return functionValue(expression, {}, state, frame);  // called, its body's value
  if (kind == "yield") {
    if (frame.autocastAtYield && !*frame.autocastAtYield) *frame.autocastAtYield = state.autocast;
    const auto all = expression.allChildren();
    const bool delegates = std::any_of(all.begin(), all.end(), [](const Node& c) { return c.is("from"); });
    for (const Node& child : expression.children()) {
      const Value value = eval(child, state, frame);
      if (frame.yielded) frame.yielded->push_back(delegates ? elementOf(value, state) : value);
    }
    return Value::unknown();
  }
  if (kind == "await") {
    auto children = expression.children();
    return children.empty() ? Value::unknown() : eval(children.front(), state, frame);
  }
  if (kind == "named_expression") {
    const Value v = eval(expression.field("value"), state, frame);
    assign(expression.field("name"), v, state, frame);
    return v;
  }
  return Value::unknown();
}

Value Interpreter::evalAttribute(const Node& expression, State& state, Frame& frame) {
  const Value object = eval(expression.field("object"), state, frame);
  return attributeOf(object, std::string(expression.field("attribute").text()), expression, state, frame);
}

Value Interpreter::attributeOf(const Value& object, const std::string& attribute, const Node& expression, State& state,
                               Frame& frame) {
  switch (object.kind) {
  case Kind::Name: {
    if (object.text.rfind("file:", 0) == 0) {  // a module of the analyzed tree
      for (auto& [path, module] : modules_)
        if ("file:" + module->source->path() == object.text || "file:" + path == object.text)
          return importedGlobal(*module, attribute, state).value_or(Value::unknown());
      return Value::unknown();
    }
    const std::string dotted = object.text + "." + attribute;
    if (auto dtype = torchDtype(dotted)) return Value::dtypeOf(DtypeSet(*dtype));
    if (dotted == "math.pi") return Value::numeric(std::numbers::pi);
    if (dotted == "math.e") return Value::numeric(std::numbers::e);
    return Value::name(dotted);
  }
  case Kind::Tensor:
    if (attribute == "dtype") return object.dtype.single() ? Value::dtypeOf(object.dtype) : Value::unknown();
    if (attribute == "grad") {
      Value gradient = Value::tensor(object.dtype);
      gradient.isGradient = true;
      return gradient;
    }
    if (attribute == "T" || attribute == "mT" || attribute == "data") return object;
    return Value::unknown();
  case Kind::Object: {
    auto it = state.heap.find(object.object);
    if (it == state.heap.end()) return Value::unknown();
    const Object& o = it->second;
    if (auto a = o.attributes.find(attribute); a != o.attributes.end()) return a->second;
    if (o.cls) {
      if (const FunctionInfo* method = findMethod(*o.cls, attribute)) {
        // A property: its getter's result.
        if (decoratedAs(*method, {"@property", "@functools.cached_property", "@cached_property"})) {
          Call get;
          get.node = expression;
          return callFunction(*method, object, get, state, frame);
        }
        Value bound = Value::make(Kind::Method);
        bound.function = method;
        bound.object = object.object;
        return bound;
      }
      // A class attribute: a dataclass field's default, a constant.
      for (const ClassInfo* cls = o.cls; cls;) {
        if (auto c = cls->attributes.find(attribute); c != cls->attributes.end()) {
          Frame classFrame;
          classFrame.module = cls->module;
          return eval(c->second, state, classFrame);
        }
        cls = analyzedBase(*cls);
      }
    }
    if (o.type == Object::Type::Pretrained && attribute == "dtype")
      return o.parameters.single() ? Value::dtypeOf(o.parameters) : Value::unknown();
    // A layer's own parameters.
    if (o.type == Object::Type::Layer && !o.parameters.isBottom() && (attribute == "weight" || attribute == "bias"))
      return Value::tensor(o.parameters, o.parametersOrigin);
    if (o.submoduleOf && o.parameters.single() && (attribute == "weight" || attribute == "bias"))
      return Value::tensor(o.parameters);
    return Value::unknown();
  }
  case Kind::Function:  // a registry's key: _models[fn.__name__] = fn
    if (attribute == "__name__") return Value::string(object.function->name);
    return Value::unknown();
  case Kind::Class: {
    if (attribute == "__name__") return Value::string(object.cls->name);
    if (std::find(object.cls->enumMembers.begin(), object.cls->enumMembers.end(), attribute) !=
        object.cls->enumMembers.end())
      return enumMember(*object.cls, attribute, state);
    if (const FunctionInfo* method = findMethod(*object.cls, attribute)) {
      Value f = Value::make(Kind::Function);
      f.function = method;
      if (decoratedAs(*method, {"@classmethod"})) f.cls = object.cls;  // its `cls`
      return f;
    }
    if (auto c = object.cls->attributes.find(attribute); c != object.cls->attributes.end()) {
      Frame classFrame;
      classFrame.module = object.cls->module;
      return eval(c->second, state, classFrame);
    }
    return Value::unknown();
  }
  case Kind::String:  // a pathlib.Path's parent, name or stem; a torch.device's type
    if (attribute == "type" && (object.text.rfind("cuda", 0) == 0 || object.text.rfind("cpu", 0) == 0))
      return Value::string(object.text.substr(0, object.text.find(':')));
    return pathFunction("." + attribute, {object}).value_or(Value::unknown());
  case Kind::Dict:  // cfg.SOLVER of an attribute dict (a dict subclass whose __getattr__ reads its items)
    if (object.fromConfigFile) return configSetting(object, Value::string(attribute), expression, nullptr);
    for (size_t i = 0; i < object.keys.size(); ++i)
      if (object.keys[i].is(Kind::String) && object.keys[i].text == attribute) return object.items[i];
    return Value::unknown();
  default: return Value::unknown();
  }
}

// A dict's items(), keys() and values() (a config file's values are its
// settings); update() and setdefault() of a dict storage() finds, for the
// merges of defaults with a config file (`cfg.setdefault(section,
// {}).update(values)`). Nullopt for the other methods.
std::optional<Value> Interpreter::callDictMethod(const Value& dict, const Node& dictNode, const std::string& method,
                                                 Call& call, State& state, Frame& frame) {
  auto valueAt = [&](const Value& of, size_t i) {
    return of.fromConfigFile ? configSetting(of, of.keys[i], call.node, nullptr) : of.items[i];
  };
  if ((method == "items" || method == "keys" || method == "values") && call.args.empty()) {
    Value list = Value::make(Kind::List);
    list.itemsStandForMore = dict.itemsStandForMore;
    for (size_t i = 0; i < dict.keys.size(); ++i) {
      Value pair = Value::make(Kind::List);
      pair.items = {dict.keys[i], valueAt(dict, i)};
      list.items.push_back(method == "items" ? pair : pair.items[method == "keys" ? 0 : 1]);
    }
    return list;
  }
  if (method == "setdefault") {
    if (Value* item = storage(call.node, state, frame)) return *item;
    return std::nullopt;
  }
  if (method == "update" && (call.args.size() == 1 ? call.args[0].is(Kind::Dict) : call.args.empty())) {
    Value* target = storage(dictNode, state, frame);
    if (!target || !target->is(Kind::Dict) || target->fromConfigFile) return Value::none();
    if (!call.args.empty()) {
      const Value& source = call.args[0];
      // cfg = dict(DEFAULTS); cfg.update(json.load(f)): the file may set any default's key too.
      if (source.fromConfigFile)
        for (size_t i = 0; i < target->keys.size(); ++i)
          if (target->keys[i].is(Kind::String) &&
              std::none_of(source.keys.begin(), source.keys.end(),
                           [&](const Value& key) { return key.sameConstant(target->keys[i]); }))
            target->items[i] = configSetting(source, target->keys[i], call.node, &target->items[i]);
      for (size_t i = 0; i < source.keys.size(); ++i) itemOf(*target, source.keys[i]) = valueAt(source, i);
    }
    for (const auto& [key, value] : call.kwargs) itemOf(*target, Value::string(key)) = value;
    return Value::none();
  }
  return std::nullopt;
}

// decay.append(p): the list the name holds grows (a few items stand for
// all); (no_decay if p.ndim == 1 else decay).append(p): the list the test
// picks, or each where it is not known.
bool Interpreter::growList(const Node& listNode, const Value* list, const std::string& method, const Value& item,
                           State& state, Frame& frame) {
  Node chooser = listNode;
  if (chooser.is("parenthesized_expression") && chooser.children().size() == 1) chooser = chooser.children().front();
  if (chooser.is("conditional_expression") && chooser.children().size() == 3) {
    const auto parts = chooser.children();  // the list if the test holds, the test, the list otherwise
    const auto holds = test(eval(parts[1], state, frame));
    bool grown = false;
    for (size_t i : {size_t(0), size_t(2)})
      if (!holds || *holds == (i == 0)) grown = growList(parts[i], nullptr, method, item, state, frame) || grown;
    return grown;
  }
  // groups[key]["params"].append(p) too: an item of a dict.
  if (!listNode.is("identifier") && !listNode.is("attribute") && !listNode.is("subscript")) return false;
  Value grown = list ? *list : eval(listNode, state, frame);
  if (!grown.is(Kind::List)) return false;
  if (method == "append") grown.items.push_back(item);
  else if (item.is(Kind::List)) grown.items.insert(grown.items.end(), item.items.begin(), item.items.end());
  else grown = Value::unknown();
  if (grown.is(Kind::List) && grown.items.size() > 4) {
    grown.items.resize(4);
    grown.itemsStandForMore = true;
  }
  assign(listNode, grown, state, frame);
  return true;
}

// {k: wrap(v) for k, v in d.items()} over known items: each pair in turn.
std::optional<Value> Interpreter::mappedDict(const Node& comprehension, State& state, Frame& frame) {
  constexpr size_t kPairsMapped = 64;
  const Node pair = comprehension.field("body");
  std::vector<Node> clauses;
  for (const Node& clause : comprehension.children())
    if (clause.is("for_in_clause") || clause.is("if_clause")) clauses.push_back(clause);
  if (!pair.is("pair") || clauses.empty() || !clauses[0].is("for_in_clause") ||
      std::any_of(clauses.begin() + 1, clauses.end(), [](const Node& c) { return !c.is("if_clause"); }))
    return std::nullopt;
  const Value iterable = eval(clauses[0].field("right"), state, frame);
  if (!iterable.is(Kind::List) || iterable.itemsStandForMore || iterable.items.size() > kPairsMapped)
    return std::nullopt;
  const Node target = clauses[0].field("left");
  std::map<std::string, std::optional<Value>> shadowed;  // the comprehension's names are its own
  for (const Node& name : target.is("identifier") ? std::vector<Node>{target} : target.children())
    if (name.is("identifier")) {
      auto old = state.locals.find(std::string(name.text()));
      shadowed[std::string(name.text())] = old == state.locals.end() ? std::nullopt : std::optional(old->second);
    }
  Value dict = Value::make(Kind::Dict);
  bool known = true;
  for (const Value& element : iterable.items) {
    assign(target, element, state, frame);
    bool kept = true;
    for (size_t i = 1; i < clauses.size() && kept; ++i)
      for (const Node& condition : clauses[i].children()) kept = kept && test(eval(condition, state, frame)) != false;
    if (!kept) continue;
    const Value key = eval(pair.field("key"), state, frame);
    known = known && (key.is(Kind::String) || key.is(Kind::Number));
    dict.keys.push_back(key);
    dict.items.push_back(eval(pair.field("value"), state, frame));
  }
  for (const auto& [name, old] : shadowed) {
    if (old) state.locals[name] = *old;
    else state.locals.erase(name);
  }
  if (!known) return Value::unknown();
  return dict;
}

// {k: v for k, v in config.items() if k in known}: the dict itself, for the
// keys the filter keeps are among its own.
std::optional<Value> Interpreter::filteredDict(const Node& comprehension, State& state, Frame& frame) {
  const Node pair = comprehension.field("body");
  std::vector<Node> clauses;
  for (const Node& clause : comprehension.children())
    if (clause.is("for_in_clause")) clauses.push_back(clause);
  if (!pair.is("pair") || clauses.size() != 1) return std::nullopt;
  const Node target = clauses[0].field("left");
  const Node items = clauses[0].field("right");
  const auto names = target.children();
  if (!items.is("call") || !items.field("function").is("attribute") ||
      items.field("function").field("attribute").text() != "items" || names.size() != 2 ||
      pair.field("key").text() != names[0].text() || pair.field("value").text() != names[1].text())
    return std::nullopt;
  Value dict = eval(items.field("function").field("object"), state, frame);
  if (!dict.is(Kind::Dict)) return std::nullopt;
  return dict;
}

Value Interpreter::evalSubscript(const Node& expression, State& state, Frame& frame) {
  const Value container = eval(expression.field("value"), state, frame);
  const Node index = expression.field("subscript");
  const Value key = eval(index, state, frame);
  if (container.is(Kind::Tensor)) {
    Value v = container;
    v.description.clear();
    return v;
  }
  if (container.is(Kind::Class) && !container.cls->enumMembers.empty()) {  // Precision[name]: the member by name
    std::vector<Value> names;
    for (const std::string& name : container.cls->enumMembers) names.push_back(Value::string(name));
    settingUsed(key, names, /*lookup=*/true);
    if (!key.is(Kind::String) || std::find(container.cls->enumMembers.begin(), container.cls->enumMembers.end(),
                                           key.text) == container.cls->enumMembers.end())
      return Value::unknown();
    Value member = enumMember(*container.cls, key.text, state);
    member.setting = key.setting;
    return member;
  }
  if (container.is(Kind::Name) && container.text == "os.environ" && key.is(Kind::String))
    return readSetting("$" + key.text, expression, Value::unknown());
  if (container.fromConfigFile && key.is(Kind::String)) return configSetting(container, key, expression, nullptr);
  if (container.is(Kind::Dict)) {
    settingUsed(key, container.keys, /*lookup=*/true);
    dtypeChosenBy(key, container);
    if (!key.is(Kind::String) && !key.is(Kind::Number)) {
      // An unknown key: the values all alike, or unknown.
      if (container.items.empty()) return Value::unknown();
      Value joined = container.items.front();
      for (const Value& item : container.items) joined = joinValues(joined, item);
      return joined;
    }
    for (size_t i = 0; i < container.keys.size(); ++i)
      if (container.keys[i].sameConstant(key)) return container.items[i];
    return Value::unknown();
  }
  if (container.is(Kind::List) && key.is(Kind::Number)) {
    const long i = static_cast<long>(key.number);
    const long n = static_cast<long>(container.items.size());
    if (i >= -n && i < n) return container.items[static_cast<size_t>(i < 0 ? i + n : i)];
  }
  if (container.is(Kind::Object)) {
    // A ModuleList's or Sequential's element; a model output's first field.
    auto it = state.heap.find(container.object);
    if (it != state.heap.end() && it->second.type == Object::Type::ConfigParser && key.is(Kind::String))
      return iniSection(it->second, key.text);
    if (it != state.heap.end() && it->second.type == Object::Type::ModelOutput && key.is(Kind::Number) &&
        key.number == 0)
      return it->second.attributes["logits"];
    if (it != state.heap.end() && it->second.type == Object::Type::Container && !it->second.children.empty()) {
      if (key.is(Kind::Number) && key.number >= 0 && key.number < it->second.children.size())
        return Value::objectRef(Kind::Object, it->second.children[static_cast<size_t>(key.number)]);
      if (auto named = key.is(Kind::String) ? it->second.attributes.find(key.text) : it->second.attributes.end();
          named != it->second.attributes.end())
        return named->second;
    }
  }
  return Value::unknown();
}

Value Interpreter::evalComparison(const Node& expression, State& state, Frame& frame) {
  const auto parts = expression.allChildren();
  if (parts.size() < 3) return Value::unknown();
  const Value left = eval(parts.front(), state, frame);
  const Value right = eval(parts.back(), state, frame);
  std::string op;
  for (size_t i = 1; i + 1 < parts.size(); ++i) op += (op.empty() ? "" : " ") + std::string(parts[i].text());
  if (parts.size() > 3 && op != "is not" && op != "not in") return Value::unknown();  // chains
  if (op == "is" || op == "is not") {
    const bool negate = op == "is not";
    // `args.clip_grad is not None` of a setting that defaults to None: given is the other case.
    if (right.is(Kind::None) && left.is(Kind::None)) settingUsed(left, {Value::unknown()});
    // Only None is None: a value of any known kind is not, nor a setting's "given" (of a None default).
    if (right.is(Kind::None) && !left.is(Kind::Unknown) && !left.is(Kind::Name))
      return Value::boolean(left.is(Kind::None) != negate);
    if (const Setting* setting = settingOf(left);
        right.is(Kind::None) && left.is(Kind::Unknown) && setting && setting->values.front().is(Kind::None))
      return Value::boolean(negate);
    // What an earlier branch on it told: not None, or truthy (None is not).
    if (right.is(Kind::None) && left.is(Kind::Unknown) && (left.knownNotNone || left.knownTruth == true))
      return Value::boolean(negate);
    // `precision is Precision.BF16`: an enum's members are one object each.
    if (isEnumMember(left) && isEnumMember(right)) {
      settingUsed(left);
      settingUsed(right);
      return Value::boolean((left.object == right.object) != negate);
    }
    // `amp_dtype is torch.float16`: a dtype is one object per dtype.
    if (left.is(Kind::Dtype) && right.is(Kind::Dtype) && left.dtype.single() && right.dtype.single()) {
      settingUsed(left, {right});
      settingUsed(right, {left});
      return Value::boolean(left.sameConstant(right) != negate);
    }
    return Value::unknown();
  }
  if (op == "==" || op == "!=" || op == "in" || op == "not in") {
    const bool membership = op == "in" || op == "not in";
    settingUsed(left, membership ? (right.is(Kind::Dict) ? right.keys : right.items) : std::vector<Value>{right});
    if (!membership) settingUsed(right, {left});
  }
  if ((op == "==" || op == "!=") && isEnumMember(left) && isEnumMember(right))
    return Value::boolean((left.object == right.object) == (op == "=="));
  if (op == "==" || op == "!=") {
    const bool known = (left.is(Kind::String) || left.is(Kind::Number) || left.is(Kind::Bool) || left.is(Kind::Dtype) ||
                        left.is(Kind::None)) &&
                       left.kind == right.kind &&
                       (!left.is(Kind::Dtype) || (left.dtype.single() && right.dtype.single()));
    // None equals only None, a string only a string (`amp_dtype == torch.float16` where the map gave None).
    auto noneOrString = [](const Value& v) { return v.is(Kind::None) || v.is(Kind::String); };
    auto constant = [](const Value& v) {
      return v.is(Kind::None) || v.is(Kind::String) || v.is(Kind::Number) || v.is(Kind::Bool) ||
             (v.is(Kind::Dtype) && v.dtype.single());
    };
    if (left.kind != right.kind && constant(left) && constant(right) && (noneOrString(left) || noneOrString(right)))
      return Value::boolean(op == "!=");
    if (!known) return Value::unknown();
    return Value::boolean(left.sameConstant(right) == (op == "=="));
  }
  if (op == "in" || op == "not in") {
    if (!left.is(Kind::String) && !left.is(Kind::Number)) return Value::unknown();
    if (right.is(Kind::List) || right.is(Kind::Dict)) {
      const auto& candidates = right.is(Kind::Dict) ? right.keys : right.items;
      bool found = false;
      for (const Value& c : candidates) {
        if (c.is(Kind::None)) continue;  // `torch_dtype in ["auto", None]`: None is no string
        if (!c.is(Kind::String) && !c.is(Kind::Number)) return Value::unknown();
        found = found || c.sameConstant(left);
      }
      return Value::boolean(found == (op == "in"));
    }
    if (right.is(Kind::String) && left.is(Kind::String))
      return Value::boolean((right.text.find(left.text) != std::string::npos) == (op == "in"));
    return Value::unknown();
  }
  if (left.is(Kind::Number) && right.is(Kind::Number) && (op == "<" || op == "<=" || op == ">" || op == ">=")) {
    auto holds = [&](double l, double r) {
      return op == "<" ? l < r : op == "<=" ? l <= r : op == ">" ? l > r : l >= r;
    };
    // `args.clip_grad > 0` with a default of 0: a value on the threshold's
    // other side is one the program names too.
    const bool settingLeft = left.setting != 0;
    if (settingLeft || right.setting != 0) {
      const Value& setting = settingLeft ? left : right;
      const double threshold = settingLeft ? right.number : left.number;
      auto holdsWith = [&](double v) { return settingLeft ? holds(v, right.number) : holds(left.number, v); };
      for (double candidate : {threshold, threshold + 1, threshold - 1})
        if (holdsWith(candidate) != holdsWith(setting.number)) {
          Value other = setting;
          other.number = candidate;
          settingUsed(setting, {other});
          break;
        }
    }
    return Value::boolean(holds(left.number, right.number));
  }
  return Value::unknown();
}

Value Interpreter::evalBinary(const Node& expression, State& state, Frame& frame) {
  const Node leftNode = expression.field("left"), rightNode = expression.field("right");
  const Value left = eval(leftNode, state, frame);
  const Value right = eval(rightNode, state, frame);
  const std::string op(expression.field("operator").text());
  if (left.is(Kind::Number) && right.is(Kind::Number)) {
    Value v = left;
    if (op == "+") v.number += right.number;
    else if (op == "-") v.number -= right.number;
    else if (op == "*") v.number *= right.number;
    else if (op == "/" && right.number != 0) v.number /= right.number;
    else if (op == "**") v.number = std::pow(left.number, right.number);
    else return Value::unknown();
    return v;
  }
  if (left.is(Kind::String) && right.is(Kind::String) && op == "+") return Value::string(left.text + right.text);
  if (left.is(Kind::String) && right.is(Kind::String) && op == "/")  // a pathlib.Path's join (a str has no `/`)
    return *pathFunction("pathlib.Path", {left, right});
  if (left.is(Kind::List) && right.is(Kind::List) && op == "+") return concatenated(left, right);
  if (!left.is(Kind::Tensor) && !right.is(Kind::Tensor)) return Value::unknown();
  Call call;
  call.node = expression;
  call.args = {left, right};
  call.argNodes = {leftNode, rightNode};
  if (op == "@") return tensorOp("matmul", {left, right}, call, state, frame);
  static const std::map<std::string, std::string> kOps = {
      {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"**", "pow"}};
  auto it = kOps.find(op);
  if (it == kOps.end()) return Value::unknown();
  // loss * 1024, loss * LOSS_SCALE: scaling by hand (DL203).
  if (op == "*" && (left.is(Kind::Tensor) != right.is(Kind::Tensor))) {
    const bool tensorLeft = left.is(Kind::Tensor);
    const Value& factor = tensorLeft ? right : left;
    const Node factorNode = tensorLeft ? rightNode : leftNode;
    if (factor.is(Kind::Number) || factorNode.is("identifier") || factorNode.is("attribute")) {
      std::optional<std::string> variable;
      if (factorNode.is("identifier") || factorNode.is("attribute")) {
        const std::string_view text = factorNode.text();
        variable = std::string(text.substr(text.rfind('.') == std::string_view::npos ? 0 : text.rfind('.') + 1));
      }
      const std::optional<double> constant = factor.is(Kind::Number) ? std::optional(factor.number) : std::nullopt;
      ManualScaling scaling = manualScalingOf(expression.location(), constant, variable, describe(factorNode));
      scaling.fixed = constant.has_value();
      if (scaling.largeConstant || scaling.namedAsScale) {
        Value v = tensorLeft ? left : right;
        v.manual = scaling;
        v.factor = variable ? std::hash<std::string>{}(std::string(factorNode.text())) : 0;
        v.description.clear();
        v.castInAutocast.reset();
        return v;
      }
    }
  }
  // A tensor and a Python number: the tensor's dtype (a number does not promote it).
  if (!left.is(Kind::Tensor) || !right.is(Kind::Tensor)) {
    Value v = left.is(Kind::Tensor) ? left : right;
    // `t.item()`, `float(x)`, `math.sqrt(d)`, `width ** -0.5`: a number whose value is not known.
    auto isNumber = [](const Value& value, const Node& node) {
      if (value.is(Kind::Number)) return true;
      if (value.is(Kind::Tensor)) return false;
      if (node.is("binary_operator") && node.field("operator").text() == "**")
        return node.field("right").is("integer") || node.field("right").is("float") ||
               (node.field("right").is("unary_operator") && (node.field("right").field("argument").is("integer") ||
                                                             node.field("right").field("argument").is("float")));
      if (!node.is("call")) return false;
      const Node function = node.field("function");
      return (function.is("attribute") && function.field("attribute").text() == "item") ||
             (function.is("attribute") && function.field("object").text() == "math") ||
             (function.is("identifier") && (function.text() == "float" || function.text() == "int"));
    };
    const bool byNumber = isNumber(left, leftNode) || isNumber(right, rightNode);
    if (!byNumber && !left.is(Kind::Tensor) == !right.is(Kind::Tensor)) return Value::unknown();
    if (!byNumber) v.dtype = DtypeSet::unknown();
    v.description.clear();
    if (!byNumber) v.castInAutocast.reset();  // `-d.half() / t`: still the cast's rounded values
    return v;
  }
  return tensorOp(it->second, {left, right}, call, state, frame);
}

// ---------------------------------------------------------------------------
// Calls.

Value Interpreter::evalCall(const Node& callNode, State& state, Frame& frame) {
  const Node function = callNode.field("function");
  Call call;
  call.node = callNode;
  const Node arguments = callNode.field("arguments");
  if (arguments.is("generator_expression")) {
    call.args.push_back(eval(arguments, state, frame));
    call.argNodes.push_back(arguments);
  } else {
    for (const Node& argument : arguments.children()) {
      if (argument.is("keyword_argument")) {
        const std::string name(argument.field("name").text());
        call.kwargs[name] = eval(argument.field("value"), state, frame);
        call.kwargNodes[name] = argument.field("value");
      } else if (argument.is("list_splat") || argument.is("dictionary_splat")) {
        const Value spread = eval(argument.children().empty() ? Node() : argument.children().front(), state, frame);
        // cls(**config): a dict whose keys are all known names the keywords.
        const bool named =
            argument.is("dictionary_splat") && spread.is(Kind::Dict) &&
            std::all_of(spread.keys.begin(), spread.keys.end(), [](const Value& key) { return key.is(Kind::String); });
        // f(*layers) of a list whose items are all known: those arguments.
        if (argument.is("list_splat") && spread.is(Kind::List) && !spread.itemsStandForMore) {
          for (const Value& item : spread.items) {
            call.args.push_back(item);
            call.argNodes.push_back(Node());
          }
          continue;
        }
        // nn.Sequential(*layers) of a list built in a loop: the modules one pass appends, in order.
        if (argument.is("list_splat") && spread.is(Kind::List)) call.spreadItems = spread.items;
        if (!named) {
          call.spread = true;
          const Node spreadNode = argument.children().empty() ? Node() : argument.children().front();
          // **vars(args), **{k: v for k, v in vars(args).items() if ...}, or kwargs[f.name] = ... filled
          // from the environment over fields(cls): any keyword may be given.
          const bool keyedAtRunTime =
              spread.is(Kind::Dict) && std::any_of(spread.keys.begin(), spread.keys.end(),
                                                   [](const Value& key) { return key.is(Kind::Unknown); });
          call.spreadsParsedArguments = call.spreadsParsedArguments || keyedAtRunTime ||
                                        spreadNode.text().find("vars(") != std::string_view::npos;
          continue;
        }
        for (size_t i = 0; i < spread.keys.size(); ++i)
          if (!call.kwargs.count(spread.keys[i].text))
            call.kwargs[spread.keys[i].text] =
                spread.fromConfigFile ? configSetting(spread, spread.keys[i], argument, nullptr) : spread.items[i];
        if (spread.fromConfigFile) call.spreadConfigFile = spread;
        // **vars(ns) of a namespace whose arguments were added where the analysis does not see them all
        // (a loop over dataclasses.fields(), HfArgumentParser): any other keyword may be given too.
        if (argument.is("dictionary_splat") && !argument.children().empty() &&
            argument.children().front().text().find("vars(") != std::string_view::npos)
          call.spreadsParsedArguments = true;
      } else {
        call.args.push_back(eval(argument, state, frame));
        call.argNodes.push_back(argument);
      }
    }
  }
  if (!state.reached) return {};
  // obj.method(...): by what obj is.
  if (function.is("attribute")) {
    const Node objectNode = function.field("object");
    const std::string method(function.field("attribute").text());
    const Value object = eval(objectNode, state, frame);
    if (object.is(Kind::Tensor)) {
      Value self = object;
      if (self.description.empty()) self.description = describe(objectNode);
      return callTensorMethod(self, method, call, state, frame);
    }
    // x.half(), x.to(dtype=torch.float32) on a value the analysis does not
    // know (a parameter, a library's result): a tensor converted to that dtype.
    if (object.is(Kind::Unknown) && !call.spread) {
      // model.cuda().half() on a model passed in: by its name, a module
      // whose parameters take the dtype (a trainer's optimizer over them).
      if (conversionMethod(method) && namesAModule(objectNode.text())) {
        Object module;
        module.type = Object::Type::Pretrained;
        module.isModule = true;
        module.typeName = "module";
        module.name = describe(objectNode);
        module.parameters = DtypeSet(*conversionMethod(method));
        module.parametersOrigin = noteAt(
            callNode, fmt::format("the parameters of {} became {} here", module.name, module.parameters.toString()));
        const Value converted = makeObject(std::move(module), state);
        // In place: `model.half()` alone converts the model the name holds.
        if (objectNode.is("identifier") || objectNode.is("attribute")) assign(objectNode, converted, state, frame);
        return converted;
      }
      Value self = Value::tensor(DtypeSet::unknown());
      self.description = describe(objectNode);
      // loss.backward() on a loss the analysis could not follow: still a backward of an unscaled loss.
      if (conversionMethod(method) || method == "backward") return callTensorMethod(self, method, call, state, frame);
      if (method == "to" || method == "type" || method == "type_as") {
        const Value converted = callTensorMethod(self, method, call, state, frame);
        if (converted.is(Kind::Tensor) && !converted.dtype.isUnknown()) return converted;
      }
    }
    if (object.is(Kind::ScaledLoss) && method == "backward") {
      // The loss itself was computed in Half (DL106), whatever the scale it is
      // multiplied by, as the C++ analyzer reads scaler.scale(loss).backward().
      if (!object.items.empty() && object.items.front().is(Kind::Tensor))
        tensorOp("backward", {object.items.front()}, call, state, frame);
      const ObjectRef scaler{object.object, state.heap.count(object.object) ? state.heap[object.object].name : ""};
      state.protocol.scaledBackward(scaler, callNode.location(), object.scaledAt.value_or(callNode.location()));
      return Value::none();
    }
    if (object.is(Kind::Object)) {
      auto it = state.heap.find(object.object);
      if (it != state.heap.end()) {
        // self.encoder(x): an attribute that holds a module, or a function.
        if (auto attribute = it->second.attributes.find(method); attribute != it->second.attributes.end()) {
          const Value held = attribute->second;
          if (held.is(Kind::Object)) return callModule(held.object, call, state, frame);
          if (held.is(Kind::Function)) return callFunction(*held.function, std::nullopt, call, state, frame);
          if (held.is(Kind::Method))
            return callFunction(*held.function, Value::objectRef(Kind::Object, held.object), call, state, frame);
          if (held.is(Kind::Name)) return callLibrary(held.text, call, state, frame);
          if (held.is(Kind::Class)) return instantiate(*held.cls, call, state, frame);
          if (held.is(Kind::Partial)) return callValue(held, call, state, frame);
        }
        if (it->second.cls)
          if (const FunctionInfo* m = findMethod(*it->second.cls, method))
            return callFunction(*m, object, call, state, frame);
      }
      return callObjectMethod(object.object, method, call, state, frame);
    }
    if (object.is(Kind::Class) && method == "apply") return applyCustomFunction(*object.cls, call, state, frame);
    if ((method == "append" || method == "extend") && call.args.size() == 1 &&
        growList(objectNode, &object, method, call.args[0], state, frame))
      return Value::none();
    // self._saved.pop(): a stack of states a hook pushed, its last item.
    if (method == "pop" && call.args.empty() && object.is(Kind::List) && !object.itemsStandForMore &&
        !object.items.empty() && (objectNode.is("identifier") || objectNode.is("attribute"))) {
      Value shorter = object;
      const Value last = shorter.items.back();
      shorter.items.pop_back();
      assign(objectNode, shorter, state, frame);
      return last;
    }
    // f.read() of an open file: its text, for json.loads.
    if (object.is(Kind::File) && method == "read" && call.args.empty()) return object;
    if (object.is(Kind::Parameters) || object.is(Kind::List) || object.is(Kind::Dict) || object.is(Kind::String)) {
      if (object.fromConfigFile && isIniGetter(method) && !call.args.empty() && call.args[0].is(Kind::String)) {
        const Value* byDefault = call.args.size() > 1 ? &call.args[1] : call.kw("fallback");
        return iniConverted(method, configSetting(object, call.args[0], call.node, byDefault));
      }
      if (object.is(Kind::Dict)) {
        if (auto result = callDictMethod(object, objectNode, method, call, state, frame)) return *result;
      }
      if (object.is(Kind::Dict) && method == "get" && !call.args.empty()) {
        settingUsed(call.args[0], object.keys, /*lookup=*/true);
        dtypeChosenBy(call.args[0], object);
        for (size_t i = 0; i < object.keys.size(); ++i)
          if (object.keys[i].sameConstant(call.args[0]) || object.keys[i].is(Kind::Unknown)) return object.items[i];
        return call.args.size() > 1 ? call.args[1] : Value::none();
      }
      // precision.endswith("-mixed"): a setting's value tested by its suffix.
      if (object.is(Kind::String) && (method == "endswith" || method == "startswith") && !call.args.empty() &&
          call.args[0].is(Kind::String)) {
        const std::string& text = object.text;
        const std::string& part = call.args[0].text;
        const bool holds = part.size() <= text.size() &&
                           (method == "startswith" ? text.compare(0, part.size(), part) == 0
                                                   : text.compare(text.size() - part.size(), part.size(), part) == 0);
        settingUsed(object);
        return Value::boolean(holds);
      }
      // A pathlib.Path's methods (a str has none of these names).
      if (object.is(Kind::String) && call.args.empty() && (method == "open" || method == "read_text")) {
        Value file = Value::make(Kind::File);
        file.text = object.text;
        return file;
      }
      if (object.is(Kind::String) && !call.spread && call.kwargs.empty()) {
        std::vector<Value> parts{object};
        parts.insert(parts.end(), call.args.begin(), call.args.end());
        const bool joins = method == "joinpath";
        if (joins || call.args.empty())
          if (auto path = pathFunction(joins ? "pathlib.Path" : "." + method, parts)) return *path;
      }
      if (object.is(Kind::String) && (method == "lower" || method == "strip" || method == "upper")) {
        Value v = object;
        if (method == "lower") std::transform(v.text.begin(), v.text.end(), v.text.begin(), ::tolower);
        if (method == "upper") std::transform(v.text.begin(), v.text.end(), v.text.begin(), ::toupper);
        return v;
      }
      return Value::unknown();
    }
  }
  return callValue(eval(function, state, frame), call, state, frame);
}

Value Interpreter::callValue(const Value& callee, Call& call, State& state, Frame& frame) {
  switch (callee.kind) {
  case Kind::Function: {
    const std::optional<Value> owner = callee.cls ? std::optional(Value::ofClass(callee.cls)) : std::nullopt;
    call.captured = callee.captured;
    return callFunction(*callee.function, owner, call, state, frame);
  }
  case Kind::Method:
    return callFunction(*callee.function, Value::objectRef(Kind::Object, callee.object), call, state, frame);
  case Kind::Class: return instantiate(*callee.cls, call, state, frame);
  case Kind::Object: return callModule(callee.object, call, state, frame);
  case Kind::Name: return callLibrary(callee.text, call, state, frame);
  case Kind::Partial: {
    Call bound;
    bound.node = call.node;
    bound.args = callee.items[1].items;
    bound.argNodes.assign(bound.args.size(), Node());
    bound.args.insert(bound.args.end(), call.args.begin(), call.args.end());
    bound.argNodes.insert(bound.argNodes.end(), call.argNodes.begin(), call.argNodes.end());
    const Value& keywords = callee.items[2];
    for (size_t i = 0; i < keywords.keys.size(); ++i) bound.kwargs[keywords.keys[i].text] = keywords.items[i];
    for (const auto& [name, value] : call.kwargs) bound.kwargs[name] = value;
    bound.kwargNodes = call.kwargNodes;
    bound.spread = call.spread;
    if (callee.items.size() < 4) return callValue(callee.items[0], bound, state, frame);
    // A function wrapped by an autocast region: it runs in the region.
    AutocastState saved;
    enterAutocast(callee.items[3], call.node, state, saved);
    const Value result = callValue(callee.items[0], bound, state, frame);
    if (state.reached) leaveAutocast(saved, state);
    return result;
  }
  // torch.autocast("cuda", dtype=...)(self._forward_loss): the function, run in the region.
  case Kind::Autocast:
    if (call.args.size() == 1 &&
        (call.args[0].is(Kind::Function) || call.args[0].is(Kind::Method) || call.args[0].is(Kind::Partial))) {
      Value wrapped = Value::make(Kind::Partial);
      wrapped.items = {call.args[0], Value::make(Kind::List), Value::make(Kind::Dict), callee};
      return wrapped;
    }
    break;
  default: break;
  }
  // Objects handed to code the analysis cannot see may be driven there.
  for (const Value& arg : call.args)
    if (arg.is(Kind::Object)) state.protocol.forgetScaler(arg.object);
  return Value::unknown();
}

// MyFunction.apply(...): its forward with a ctx that keeps what forward
// saves, then its backward on a gradient of the output's dtype, as autograd
// runs it later (the ops in it are the backward's: DL102, DL103).
Value Interpreter::applyCustomFunction(const ClassInfo& cls, Call& call, State& state, Frame& frame) {
  const FunctionInfo* forward = findMethod(cls, "forward");
  if (!forward) return Value::unknown();
  Object context;
  context.type = Object::Type::Settings;
  context.typeName = "ctx";
  context.name = "'ctx'";
  const Value ctx = makeObject(std::move(context), state);
  call.args.insert(call.args.begin(), ctx);
  call.argNodes.insert(call.argNodes.begin(), Node());
  // custom_fwd(cast_inputs=torch.float32) under autocast: forward (and a
  // custom_bwd backward) run with autocast off, on inputs cast to that dtype.
  const AutocastState forwardAutocast = state.autocast;
  std::optional<DtypeSet> castInputs;
  if (const auto castTo = decoratorKeyword(*forward, "custom_fwd", "cast_inputs", state);
      castTo && forwardAutocast.anyOn())
    castInputs = castTo->is(Kind::Dtype) ? castTo->dtype : DtypeSet::unknown();
  if (castInputs) {
    for (Value& arg : call.args)
      if (arg.is(Kind::Tensor) && arg.dtype.allFloating()) arg.dtype = *castInputs;
    state.autocast = AutocastState{};
  }
  const Value output = callFunction(*forward, std::nullopt, call, state, frame);
  if (castInputs) state.autocast = forwardAutocast;
  const FunctionInfo* backward = findMethod(cls, "backward");
  if (!backward || !state.reached) return output;
  Call gradient;
  gradient.node = call.node;
  gradient.args = {ctx, Value::tensor(output.is(Kind::Tensor) ? output.dtype : DtypeSet::unknown())};
  gradient.argNodes = {Node(), Node()};
  Frame autograd = frame;
  autograd.inCustomBackward = true;
  if (const auto at =
          forwardAutocast.cuda.enabled == Tristate::On ? forwardAutocast.cuda.enabledAt : forwardAutocast.cpu.enabledAt;
      at && forwardAutocast.anyOn())
    autograd.forwardUnderAutocast = Note{*at, "its forward ran under autocast, enabled here"};
  // Autograd runs backward outside the forward's region, unless custom_bwd
  // puts it back in the state forward ran in.
  State backwardState = state;
  backwardState.autocast = AutocastState{};
  if (decoratedWith(*backward, "custom_bwd") && !castInputs) backwardState.autocast = forwardAutocast;
  callFunction(*backward, std::nullopt, gradient, backwardState, autograd);
  // What backward stores into ctx stays with it; the protocol and autocast are the caller's.
  if (backwardState.reached) state.heap = backwardState.heap;
  return output;
}

// isinstance(m, Router), Router a class of the program's: decided for an
// object of the program's classes or a library module; nullopt where either
// side is not known that well.
std::optional<bool> Interpreter::isInstanceOfClass(const Value& value, const Value& types, const State& state) const {
  if (!value.is(Kind::Object)) return std::nullopt;
  auto object = state.heap.find(value.object);
  if (object == state.heap.end()) return std::nullopt;
  const std::vector<Value> tested = types.is(Kind::List) ? types.items : std::vector<Value>{types};
  if (!std::all_of(tested.begin(), tested.end(), [](const Value& t) { return t.is(Kind::Class); })) return std::nullopt;
  const ClassInfo* cls = object->second.cls;
  // A library module (nn.Linear) is none of ours; someSubmodule()'s stand-in may be any.
  if (!cls)
    return object->second.isModule && object->second.typeName != "Module" ? std::optional<bool>(false) : std::nullopt;
  return std::any_of(tested.begin(), tested.end(), [&](const Value& t) { return derivesFromClass(*cls, *t.cls); });
}

// model.modules(): the model, then its submodules depth first, each once.
void Interpreter::collectModules(ObjectId id, const State& state, std::vector<Value>& out,
                                 std::set<ObjectId>& seen) const {
  auto object = state.heap.find(id);
  if (object == state.heap.end() || !object->second.isModule || !seen.insert(id).second) return;
  out.push_back(Value::objectRef(Kind::Object, id));
  for (const auto& [name, attribute] : object->second.attributes)
    if (attribute.is(Kind::Object)) collectModules(attribute.object, state, out, seen);
  for (ObjectId child : object->second.children) collectModules(child, state, out, seen);
  for (ObjectId module : object->second.injected) collectModules(module, state, out, seen);
}

const FunctionInfo* Interpreter::findMethod(const ClassInfo& cls, const std::string& name) const {
  if (auto it = cls.methods.find(name); it != cls.methods.end()) return it->second;
  for (const Value& base : cls.bases)
    if (base.is(Kind::Class))
      if (const FunctionInfo* m = findMethod(*base.cls, name)) return m;
  return nullptr;
}

bool Interpreter::derivesFrom(const ClassInfo& cls, std::string_view libraryBase) const {
  for (const Value& base : cls.bases) {
    if (base.is(Kind::Name) && isLibraryName(base.text, libraryBase)) return true;
    if (base.is(Kind::Class) && derivesFrom(*base.cls, libraryBase)) return true;
  }
  return false;
}

bool Interpreter::derivesFromLibraryLayer(const ClassInfo& cls) const {
  return std::any_of(cls.bases.begin(), cls.bases.end(), [&](const Value& base) {
    if (base.is(Kind::Class)) return derivesFromLibraryLayer(*base.cls);
    if (!base.is(Kind::Name) || base.text.rfind("torch.nn.", 0) != 0) return false;
    const LayerKind kind = layerKind(std::string_view(base.text).substr(base.text.rfind('.') + 1));
    return !kind.container && !kind.loss && kind.hasParameters && !kind.op.empty();
  });
}

Value Interpreter::enumMember(const ClassInfo& cls, const std::string& name, State& state) {
  auto [it, made] = enumMembers_.try_emplace({&cls, name}, 0);
  if (made) it->second = nextObject_++;
  if (!state.heap.count(it->second)) {
    Object member;
    member.cls = &cls;
    member.typeName = cls.name;
    member.name = "'" + cls.name + "." + name + "'";
    Frame classFrame;
    classFrame.module = cls.module;
    member.attributes["value"] = eval(cls.attributes.at(name), state, classFrame);
    member.attributes["name"] = Value::string(name);
    state.heap[it->second] = std::move(member);
  }
  return Value::objectRef(Kind::Object, it->second);
}

Value Interpreter::enumByValue(const ClassInfo& cls, const Value& value, State& state) {
  std::vector<Value> members, values;
  for (const std::string& name : cls.enumMembers) {
    members.push_back(enumMember(cls, name, state));
    values.push_back(memberValue(members.back(), state));
  }
  // Any other value raises ValueError: the members' values are all the setting takes.
  settingUsed(value, values, /*lookup=*/true);
  for (size_t i = 0; i < members.size(); ++i)
    if (values[i].sameConstant(value)) {
      members[i].setting = value.setting;
      return members[i];
    }
  return Value::unknown();
}

const Value& Interpreter::memberValue(const Value& member, const State& state) {
  return state.heap.at(member.object).attributes.at("value");
}

bool Interpreter::isEnumMember(const Value& v) const {
  return v.is(Kind::Object) && std::any_of(enumMembers_.begin(), enumMembers_.end(),
                                           [&](const auto& member) { return member.second == v.object; });
}

namespace {

// default_collate: tensors stacked in their dtype, tuples and dicts item by
// item; numbers and anything else become tensors this analysis does not know.
Value collated(const Value& sample) {
  if (sample.is(Kind::Tensor)) return Value::tensor(sample.dtype, sample.origin);
  if (sample.is(Kind::List) || sample.is(Kind::Dict)) {
    Value batch = sample;
    for (Value& item : batch.items) item = collated(item);
    return batch;
  }
  return Value::unknown();
}

}  // namespace

Value Interpreter::iterated(const Value& iterable, State& state) {
  if (!iterable.is(Kind::Class) || iterable.cls->enumMembers.empty()) return iterable;
  Value members = Value::make(Kind::List);
  for (const std::string& name : iterable.cls->enumMembers)
    members.items.push_back(enumMember(*iterable.cls, name, state));
  return members;
}

Value Interpreter::makeObject(Object object, State& state) {
  const ObjectId id = nextObject_++;
  state.heap[id] = std::move(object);
  return Value::objectRef(Kind::Object, id);
}

Value Interpreter::callFunction(const FunctionInfo& function, std::optional<Value> self, Call& call, State& state,
                                Frame& frame) {
  // A function calling itself is followed kRecursionFollowed levels down (a config's recursive wrap: its
  // sections, then their values), deeper calls are unknown.
  if (callStack_.size() >= kMaxCallDepth ||
      std::count(callStack_.begin(), callStack_.end(), &function) > kRecursionFollowed)
    return Value::unknown();
  analyzed_.insert(&function);
  const size_t injectionsBefore = injections_;
  if (frame.topLevel) frame.module->globals = state.locals;
  const Node definition = function.definition;
  bool isStatic = false;
  Value region;
  Frame defining;  // decorators and defaults are evaluated where the function is defined
  defining.module = function.module;
  for (const Node& decorator : function.decorators) {
    const std::string_view text = decorator.text();
    if (text == "@staticmethod") isStatic = true;
    if (text == "@classmethod") {  // `cls`: the class it was called on, or the instance's
      if (self && self->is(Kind::Object) && state.heap.count(self->object) && state.heap.at(self->object).cls) {
        self = Value::ofClass(state.heap.at(self->object).cls);
      } else if (!self || !self->is(Kind::Class)) {
        self = Value::unknown();
      }
    }
    if (text.find("autocast") != std::string_view::npos) {
      // @torch.autocast(...) / @torch.cuda.amp.autocast(): the body runs in the region.
      auto children = decorator.children();
      if (!children.empty()) region = eval(children.front(), state, defining);
    }
  }

  // Parameters: self, positional, keyword, defaults (evaluated in the defining file).
  std::map<std::string, Value> locals = call.captured ? *call.captured : std::map<std::string, Value>{};
  size_t position = 0;
  bool selfBound = !self || isStatic;
  std::set<std::string> named;  // the parameters a keyword argument can name
  Node keywordsNode;  // **kwargs
  for (const Node& parameter : definition.field("parameters").children()) {
    Node nameNode = parameter;
    Node defaultNode;
    if (parameter.is("default_parameter") || parameter.is("typed_default_parameter")) {
      nameNode = parameter.field("name");
      defaultNode = parameter.field("value");
    } else if (parameter.is("typed_parameter")) {
      auto children = parameter.children();
      nameNode = children.empty() ? Node() : children.front();
    }
    // *args: the positional arguments left (_call(self, hook, *args) handing them on).
    if (nameNode.is("list_splat_pattern") && !nameNode.children().empty()) {
      Value rest = Value::unknown();
      if (!call.spread && selfBound) {
        rest = Value::make(Kind::List);
        for (size_t i = position; i < call.args.size(); ++i) rest.items.push_back(call.args[i]);
      }
      locals[std::string(nameNode.children().front().text())] = rest;
      position = call.args.size();
      continue;
    }
    if (nameNode.is("dictionary_splat_pattern") && !nameNode.children().empty()) keywordsNode = nameNode;
    if (!nameNode.is("identifier")) continue;  // /, *
    const std::string name(nameNode.text());
    named.insert(name);
    if (!selfBound) {
      locals[name] = *self;
      selfBound = true;
      continue;
    }
    Value value = Value::unknown();
    if (const Value* given = call.kw(name)) value = *given;
    else if (position < call.args.size()) value = call.args[position];
    else if (defaultNode && !call.spread) value = eval(defaultNode, state, defining);
    ++position;
    // Inside the callee, a tensor goes by its parameter's name.
    if (value.is(Kind::Tensor)) value.description = "'" + name + "'";
    locals[name] = value;
  }
  // **kwargs: the keyword arguments no parameter names.
  if (keywordsNode) {
    Value keywords = Value::unknown();
    if (!call.spread) {
      keywords = Value::make(Kind::Dict);
      for (const auto& [name, value] : call.kwargs)
        if (!named.count(name)) {
          keywords.keys.push_back(Value::string(name));
          keywords.items.push_back(value);
        }
    }
    locals[std::string(keywordsNode.children().front().text())] = keywords;
  }

  Frame callee;
  callee.module = function.module;
  callee.callChain = frame.callChain;
  callee.inCustomBackward = frame.inCustomBackward;
  callee.forwardUnderAutocast = frame.forwardUnderAutocast;
  callee.moduleEntry = frame.moduleEntry;
  if (call.node && !call.node.is("function_definition") && !call.node.is("class_definition"))
    callee.callChain.insert(callee.callChain.begin(), noteAt(call.node, "called from here"));
  if (!callee.moduleEntry && self && self->is(Kind::Object) && state.heap.count(self->object) &&
      state.heap.at(self->object).isModule && call.node && !callee.callChain.empty())
    enterModule(self->object, callee, state);
  std::vector<State> returns;
  std::vector<Value> returnValues;
  callee.returns = &returns;
  callee.returnValues = &returnValues;

  // A generator's body runs as its caller iterates, by then on other state:
  // it is followed here for what it does, and leaves the caller's state as it was.
  std::optional<State> beforeGenerator;
  if (function.isGenerator) beforeGenerator = state;
  // @contextmanager: the `with` body runs where the generator yields.
  std::optional<AutocastState> atYield;
  std::vector<Value> yielded;
  if (function.isGenerator && decoratedAs(function, {"@contextmanager", "@contextlib.contextmanager"}))
    callee.autocastAtYield = &atYield;
  else if (function.isGenerator) callee.yielded = &yielded;
  if (callee.moduleEntry && !frame.moduleEntry)
    for (auto& [name, value] : locals)
      if (value.is(Kind::Tensor)) value.handedIntoModule = callee.moduleEntry->number;
  std::map<std::string, Value> callerLocals = std::move(state.locals);
  state.locals = std::move(locals);
  AutocastState saved;
  const bool inRegion = region.is(Kind::Autocast);
  if (inRegion) {
    enterAutocast(region, definition, state, saved);
    callee.openRegions.push_back(&saved);
  }
  callStack_.push_back(&function);
  const size_t firstEntered = entered_.size();
  entered_.push_back(&function);
  const size_t findingsBefore = findings_.size();
  if (definition.is("lambda")) {
    Value body = eval(definition.field("body"), state, callee);
    if (state.reached) {
      returns.push_back(state);
      returnValues.push_back(std::move(body));
      state.reached = false;
    }
  } else {
    execBlock(definition.field("body"), state, callee);
  }
  if (inRegion && state.reached) leaveAutocast(saved, state);  // @torch.autocast(...) on the function
  callStack_.pop_back();
  const std::span<const FunctionInfo* const> calledFrom(entered_.data() + firstEntered, entered_.size() - firstEntered);
  for (size_t i = findingsBefore; i < findings_.size(); ++i)
    if (!placedAtCall_.count(i) && placeAtCall(findings_[i], calledFrom, call.node)) placedAtCall_.insert(i);
  if (callStack_.empty()) entered_.clear();
  Value result = state.reached ? Value::none() : Value::unknown();
  bool first = !state.reached;
  for (size_t i = 0; i < returns.size(); ++i) {
    result = first ? returnValues[i] : joinValues(result, returnValues[i]);
    first = false;
    state.join(returns[i]);
  }
  state.locals = std::move(callerLocals);
  adoptGlobalStores(state, frame);
  if (beforeGenerator) {
    state = std::move(*beforeGenerator);
    // A generator stands for the list it yields (a model's trainable
    // parameters picked by name, fed to an optimizer).
    if (!yielded.empty()) {
      Value list = Value::make(Kind::List);
      list.items = std::move(yielded);
      list.itemsStandForMore = true;
      return list;
    }
    // A context manager that enters autocast before it yields is that region.
    if (!atYield || *atYield == state.autocast) return Value::unknown();
    const bool cuda = atYield->cuda.enabled != Tristate::Off;
    const DeviceAutocast& device = cuda ? atYield->cuda : atYield->cpu;
    Value region = Value::make(Kind::Autocast);
    region.flag = true;
    region.text = cuda ? "cuda" : "cpu";
    region.dtype = device.dtype;
    region.enabled = device.enabled;
    if (atYield->cuda.enabled == Tristate::Off && atYield->cpu.enabled == Tristate::Off) region.text.clear();
    return region;
  }
  // A helper that swaps submodules (inject_lora: setattr(parent, name,
  // LoRALinear(child))) leaves the modules handed to it with parameters of
  // dtypes the analysis did not see.
  const std::string_view body = definition.text();
  if (injections_ == injectionsBefore &&
      (body.find("setattr(") != std::string_view::npos || body.find("add_module(") != std::string_view::npos))
    for (const Value& arg : call.args)
      if (arg.is(Kind::Object)) forgetParameters(arg.object, state);
  return result;
}

// A protocol finding made in a helper whose earlier events (the first
// unscale, the scaled backward) all happened outside it: the helper alone
// does nothing wrong, calling it there does. It is reported at the call,
// with the helper's place as a note (as the C++ analyzer does).
bool Interpreter::placeAtCall(Finding& finding, std::span<const FunctionInfo* const> calledFrom, const Node& callNode) {
  const FunctionInfo& function = *calledFrom.front();
  if (!callNode || callNode.is("function_definition") || callNode.is("class_definition") || finding.notes.empty() ||
      !isCallOrderFinding(finding))
    return false;
  auto within = [](const Node& scope, const SourceLocation& at) {
    const SourceLocation range = scope.location();
    return at.file == range.file && at.line >= range.line && at.line <= range.endLine;
  };
  // A method stays where the finding happened: one the object calls on itself
  // (self.optimizer_step()) is the training loop's own code, split up; a hook
  // of a callback object (getattr(cb, hook)(self), cb.on_after_backward(self),
  // fn = getattr(cb, hook); fn(self)) is dispatched by code every hook
  // shares, and its own line is the mistake.
  if (function.owner) return false;
  const SourceLocation& at = finding.location;
  if (!within(function.definition, at)) return false;  // made in a callee
  // Every earlier event happened outside the helper and what it called: in
  // the caller, or in another helper the caller called (clip_gradients, then
  // grad_norm_for_logging). The finding's own statement, outside any loop of
  // the helper, ran in an earlier call of it (an unscale_ called once per
  // micro-batch): that is the caller's doing too.
  std::function<bool(const Node&)> loopsOverFinding = [&](const Node& node) {
    if ((node.is("for_statement") || node.is("while_statement")) && within(node, at)) return true;
    const auto children = node.children();
    return std::any_of(children.begin(), children.end(), loopsOverFinding);
  };
  const bool repeatable = !loopsOverFinding(function.definition.field("body"));
  if (std::any_of(finding.notes.begin(), finding.notes.end(), [&](const Note& n) {
        if (repeatable && n.location.file == at.file && n.location.line == at.line) return false;
        return std::any_of(calledFrom.begin(), calledFrom.end(),
                           [&](const FunctionInfo* f) { return within(f->definition, n.location); });
      }))
    return false;
  finding.notes.insert(finding.notes.begin(), Note{finding.location, "in '" + function.name + "' here"});
  finding.location = callNode.location();
  return true;
}

// setattr(object, "name", value), or a name known only at run time: a
// config overwritten field by field from the environment or a file. Then
// each field that holds a constant is a setting, its default that constant.
void Interpreter::overwriteAttribute(ObjectId id, const Value& name, const Value& value, const Node& at, State& state) {
  auto it = state.heap.find(id);
  if (it == state.heap.end()) return;
  if (injectModule(id, name, value, state)) return;
  if (name.is(Kind::String)) {
    it->second.attributes[name.text] = value;
    return;
  }
  // Config objects only: a dataclass's instance, a parsed namespace.
  if (!(it->second.cls && it->second.cls->isDataclass)) return;
  std::map<std::string, Value> fields = it->second.attributes;
  for (const ClassInfo* cls = it->second.cls; cls;) {
    Frame classFrame;
    classFrame.module = cls->module;
    for (const auto& [field, definition] : cls->attributes)
      if (!fields.count(field)) fields[field] = eval(definition, state, classFrame);
    cls = analyzedBase(*cls);
  }
  Object& object = state.heap.at(id);
  for (const auto& [field, current] : fields) {
    const bool constant =
        current.is(Kind::Bool) || current.is(Kind::Number) || current.is(Kind::String) || current.is(Kind::None);
    if (constant && current.setting == 0)
      object.attributes[field] = readSetting(fmt::format("{}.{}", object.typeName, field), at, current,
                                             fieldChoices(*object.cls, field, state));
  }
}

// `field(default="auto", metadata={"choices": ["auto", "float16"]})`: the
// values an HfArgumentParser-style parser accepts for a dataclass's field.
std::vector<Value> Interpreter::fieldChoices(const ClassInfo& cls, const std::string& field, State& state) {
  for (const ClassInfo* c = &cls; c; c = analyzedBase(*c)) {
    auto it = c->attributes.find(field);
    if (it == c->attributes.end()) continue;
    const Node definition = it->second;
    if (!definition.is("call") || !definition.field("function").text().ends_with("field")) return {};
    for (const Node& argument : definition.field("arguments").children()) {
      if (!argument.is("keyword_argument") || argument.field("name").text() != "metadata") continue;
      Frame classFrame;
      classFrame.module = c->module;
      const Value metadata = eval(argument.field("value"), state, classFrame);
      for (size_t i = 0; metadata.is(Kind::Dict) && i < metadata.keys.size(); ++i)
        if (metadata.keys[i].is(Kind::String) && metadata.keys[i].text == "choices" && metadata.items[i].is(Kind::List))
          return metadata.items[i].items;
    }
    return {};
  }
  return {};
}

// cfg["optim"] of a configparser: the section it read, or an empty one of its file.
Value Interpreter::iniSection(const Object& parser, const std::string& name) const {
  auto it = parser.attributes.find(name);
  Value section = it != parser.attributes.end() ? it->second : configSection(parser.file, name);
  // A key the section lacks is the DEFAULT section's, still a setting of the file.
  if (auto defaults = parser.attributes.find("DEFAULT"); defaults != parser.attributes.end() && name != "DEFAULT")
    for (size_t i = 0; i < defaults->second.keys.size(); ++i) {
      const Value& key = defaults->second.keys[i];
      if (std::none_of(section.keys.begin(), section.keys.end(), [&](const Value& k) { return k.sameConstant(key); })) {
        section.keys.push_back(key);
        section.items.push_back(defaults->second.items[i]);
      }
    }
  return section;
}

// A keyword argument of the function's decorator that names `decorator`
// (`@custom_fwd(cast_inputs=torch.float32)`), evaluated where the function is
// defined; unset where the decorator or the keyword is not there.
std::optional<Value> Interpreter::decoratorKeyword(const FunctionInfo& function, std::string_view decorator,
                                                   std::string_view keyword, State& state) {
  for (const Node& d : function.decorators) {
    const auto children = d.children();
    if (d.text().find(decorator) == std::string_view::npos || children.empty() || !children.front().is("call"))
      continue;
    for (const Node& argument : children.front().field("arguments").children())
      if (argument.is("keyword_argument") && argument.field("name").text() == keyword) {
        Frame defining;
        defining.module = function.module;
        return eval(argument.field("value"), state, defining);
      }
  }
  return std::nullopt;
}

// A submodule of the model, which one not known: named_modules()' element,
// getattr(model, name), model.get_submodule(name).
Value Interpreter::someSubmodule(ObjectId modelId, State& state) {
  const Object& model = state.heap.at(modelId);
  Object submodule;
  submodule.typeName = "Module";
  submodule.name = "a submodule of " + (model.name.empty() ? std::string("the model") : model.name);
  submodule.isModule = true;
  submodule.submoduleOf = model.submoduleOf ? model.submoduleOf : modelId;
  // Which one is not known, but in a model of one dtype its weight has that dtype (LoRALinear(child) made
  // with dtype=child.weight.dtype).
  const DtypeSet all = parametersOf(submodule.submoduleOf, state);
  submodule.parameters = all.single() ? all : DtypeSet::unknown();
  return makeObject(std::move(submodule), state);
}

// A module set into some submodule (named_modules()' element), or into a
// model by a name known only at run time: injected into the model.
bool Interpreter::injectModule(ObjectId parentId, const Value& name, const Value& module, State& state) {
  const Object& parent = state.heap.at(parentId);
  if (!module.is(Kind::Object) || !parent.isModule || (!parent.submoduleOf && name.is(Kind::String))) return false;
  auto made = state.heap.find(module.object);
  if (made == state.heap.end() || !made->second.isModule) return false;
  auto& injected = state.heap.at(parent.submoduleOf ? parent.submoduleOf : parentId).injected;
  if (std::find(injected.begin(), injected.end(), module.object) == injected.end()) injected.push_back(module.object);
  ++injections_;
  return true;
}

// requires_grad_(False) on a module's parameters: whether each of its layers is frozen.
void Interpreter::setFrozen(ObjectId module, bool frozen, const Node& at, State& state) {
  for (ObjectId member : treeOf(module, state)) {
    Object& o = state.heap.at(member);
    o.frozen = frozen;
    o.frozenAt = frozen ? std::optional(at.location()) : std::nullopt;
  }
}

// Every parameter of the module frozen: its optimizer gets no gradient. An
// nn.Parameter of its own (a LoRA adapter's) is not known frozen.
bool Interpreter::allFrozen(ObjectId module, const State& state) const {
  bool any = false;
  for (ObjectId member : treeOf(module, state)) {
    const Object& o = state.heap.at(member);
    for (const auto& [name, value] : o.attributes)
      if (value.is(Kind::Tensor) && value.isParameter) return false;
    if ((o.type != Object::Type::Layer && o.type != Object::Type::Pretrained) || o.parameters.isBottom()) continue;
    if (!o.frozen) return false;
    any = true;
  }
  return any;
}

void Interpreter::forgetParameters(ObjectId id, State& state) {
  auto it = state.heap.find(id);
  if (it == state.heap.end() || !it->second.isModule) return;
  // The modules it injected are followed: only those they replaced are unknown.
  std::vector<ObjectId> injected = std::exchange(it->second.injected, {});
  convertModule(id, DtypeSet::unknown(), Node(), state);
  state.heap.at(id).injected = std::move(injected);
}

Value Interpreter::instantiate(const ClassInfo& cls, Call& call, State& state, Frame& frame) {
  Object object;
  object.type = Object::Type::Instance;
  object.cls = &cls;
  object.typeName = cls.name;
  const bool layer = derivesFromLibraryLayer(cls);
  object.isModule = derivesFrom(cls, "torch.nn.Module") || layer;
  if (derivesFrom(cls, "torch.autograd.Function")) return Value::unknown();
  if (!cls.enumMembers.empty()) {
    const Value* value = call.arg(0, "value");
    return value ? enumByValue(cls, *value, state) : Value::unknown();
  }
  // class Muon(torch.optim.Optimizer): an optimizer of the parameters given, its update rule its own.
  if (derivesFrom(cls, "torch.optim.Optimizer")) return optimizerFor(cls.name, call, state);
  // class CfgNode(dict) with `__getattr__ = dict.__getitem__`: an instance is its items, read as attributes too.
  if (derivesFrom(cls, "dict") || derivesFrom(cls, "collections.OrderedDict")) {
    if (call.args.size() == 1 && call.args[0].is(Kind::Dict) && call.kwargs.empty()) return call.args[0];
    if (!call.args.empty() || call.spread) return Value::unknown();
    Value items = Value::make(Kind::Dict);
    for (const auto& [key, value] : call.kwargs) {
      items.keys.push_back(Value::string(key));
      items.items.push_back(value);
    }
    return items;
  }
  // Class-level defaults (a dataclass's fields), then the constructor's arguments.
  Frame classFrame;
  classFrame.module = cls.module;
  for (const std::string& field : cls.fields)
    if (auto it = cls.attributes.find(field); it != cls.attributes.end()) {
      Value v = eval(it->second, state, classFrame);
      object.attributes[field] = v;
    }
  // class MELinear(nn.Linear): the layer's weight and bias are its parameters (Float, cast with the module).
  if (layer) {
    Value parameter = Value::tensor(DtypeSet(ScalarType::Float));
    parameter.convertsWithModule = parameter.isParameter = true;
    object.attributes["weight"] = parameter;
    const Value* bias = call.kw("bias");
    object.attributes["bias"] = bias && bias->truth() == false ? Value::none() : parameter;
  }
  Value self = makeObject(std::move(object), state);
  const FunctionInfo* init = findMethod(cls, "__init__");
  if (init) {
    constructing_.push_back({cls.name, call.node.location()});
    callFunction(*init, self, call, state, frame);
    constructing_.pop_back();
  } else if (cls.isDataclass || !cls.fields.empty()) {
    Object& o = state.heap[self.object];
    for (size_t i = 0; i < call.args.size() && i < cls.fields.size(); ++i) o.attributes[cls.fields[i]] = call.args[i];
    for (const auto& [name, value] : call.kwargs) o.attributes[name] = value;
    // Args(**yaml.safe_load(f)): a field the file may set is a setting of the file, its default the field's.
    if (call.spreadConfigFile)
      for (size_t i = call.args.size(); i < cls.fields.size(); ++i)
        if (const std::string& field = cls.fields[i]; !call.kwargs.count(field)) {
          const Value byDefault = o.attributes.count(field) ? o.attributes.at(field) : Value::unknown();
          const Value setting = configSetting(*call.spreadConfigFile, Value::string(field), call.node, &byDefault);
          state.heap[self.object].attributes[field] = setting;
        }
    // cls(**vars(parser.parse_args())): any field may be given.
    if (call.spreadsParsedArguments)
      overwriteAttribute(self.object, Value::unknown(), Value::unknown(), call.node, state);
  }
  if (const FunctionInfo* post = findMethod(cls, "__post_init__")) {
    Call none;
    none.node = call.node;
    callFunction(*post, self, none, state, frame);
  }
  return self;
}

// A library model's output. Its last layer is a linear (a classifier's or a
// UNet's head): autocast's dtype inside a region, its parameters' outside. A
// vision model returns that tensor; a Hugging Face model an output whose
// `logits` (`[0]`) it is. Causal LMs are left unknown: many upcast their logits.
Value Interpreter::libraryModelOutput(const Object& model, State& state) {
  const AutocastState& autocast = state.autocast;
  DtypeSet dtype = DtypeSet::unknown();
  if (autocast.cuda.enabled == Tristate::On) dtype = autocast.cuda.dtype;
  else if (autocast.cpu.enabled == Tristate::On) dtype = autocast.cpu.dtype;
  else if (autocast.cuda.enabled == Tristate::Off && autocast.cpu.enabled == Tristate::Off && model.parameters.single())
    dtype = model.parameters;
  if (dtype.isUnknown() || !dtype.single()) return Value::unknown();
  if (model.returnsTensor) return Value::tensor(dtype);
  if (model.typeName.find("CausalLM") != std::string::npos || model.typeName.find("LMHead") != std::string::npos)
    return Value::unknown();
  Object output;
  output.type = Object::Type::ModelOutput;
  output.typeName = "ModelOutput";
  for (const char* field : {"logits", "last_hidden_state", "sample"}) output.attributes[field] = Value::tensor(dtype);
  return makeObject(std::move(output), state);
}

ObjectId Interpreter::deepCopy(ObjectId id, State& state, int depth) {
  auto it = state.heap.find(id);
  if (it == state.heap.end() || depth > 16) return id;
  Object copy = it->second;
  for (ObjectId& child : copy.children) child = deepCopy(child, state, depth + 1);
  for (auto& [name, value] : copy.attributes)
    if (value.is(Kind::Object) && state.heap.count(value.object) && state.heap.at(value.object).isModule)
      value.object = deepCopy(value.object, state, depth + 1);
  return makeObject(std::move(copy), state).object;
}

// The objects of the module tree under `id`: itself, its children's and its
// attributes' (lists of modules included), each once.
std::vector<ObjectId> Interpreter::treeOf(ObjectId id, const State& state) const {
  std::vector<ObjectId> tree;
  std::set<ObjectId> seen;
  std::vector<ObjectId> work{id};
  while (!work.empty()) {
    const ObjectId current = work.back();
    work.pop_back();
    auto it = state.heap.find(current);
    if (it == state.heap.end() || !seen.insert(current).second) continue;
    tree.push_back(current);
    const Object& o = it->second;
    for (ObjectId child : o.children) work.push_back(child);
    for (ObjectId module : o.injected) work.push_back(module);
    for (const auto& [name, value] : o.attributes) {
      if (value.is(Kind::Object)) work.push_back(value.object);
      if (value.is(Kind::List))
        for (const Value& item : value.items)
          if (item.is(Kind::Object)) work.push_back(item.object);
    }
  }
  return tree;
}

void Interpreter::enterModule(ObjectId id, Frame& callee, const State& state) {
  Frame::ModuleEntry entry;
  entry.number = ++moduleCalls_;
  entry.chainLength = callee.callChain.size();
  bool first = true;
  for (ObjectId member : treeOf(id, state)) {
    const Object& o = state.heap.at(member);
    if (o.type != Object::Type::Layer || o.parameters.isBottom()) continue;
    if (first) entry.sharedOrigin = o.parametersOrigin;
    else if (entry.sharedOrigin && !sameOrigin(*entry.sharedOrigin, o.parametersOrigin)) entry.sharedOrigin.reset();
    first = false;
  }
  callee.moduleEntry = entry;
}

DtypeSet Interpreter::parametersOf(ObjectId id, const State& state, std::optional<Note>* origin) const {
  DtypeSet dtype;
  for (ObjectId member : treeOf(id, state)) {
    const Object& o = state.heap.at(member);
    if (o.type == Object::Type::Layer || o.type == Object::Type::Pretrained) {
      dtype = dtype.join(o.parameters);
      if (origin && !*origin && o.parametersOrigin) *origin = o.parametersOrigin;
    }
    // self.lora_a = nn.Parameter(...): its own parameters too.
    for (const auto& [name, value] : o.attributes)
      if (value.is(Kind::Tensor) && value.isParameter) dtype = dtype.join(value.dtype);
  }
  return dtype.isBottom() ? DtypeSet::unknown() : dtype;
}

void Interpreter::convertModule(ObjectId id, DtypeSet to, const Node& at, State& state) {
  auto root = state.heap.find(id);
  if (root == state.heap.end()) return;
  const std::string name = root->second.name.empty() ? (at ? describe(at) : "the module") : root->second.name;
  const std::optional<Note> origin =
      at && !to.isUnknown()
          ? std::optional(noteAt(at, fmt::format("the parameters of {} became {} here", name, to.toString())))
          : std::nullopt;
  const std::vector<ObjectId> tree = treeOf(id, state);
  for (ObjectId member : tree) {
    Object& o = state.heap.at(member);
    // Layers without parameters (ReLU, pooling, dropout) stay without.
    if ((o.type == Object::Type::Layer || o.type == Object::Type::Pretrained) && !o.parameters.isBottom()) {
      o.parameters = to;
      o.parametersOrigin = origin;
    }
    // self.weight = nn.Parameter(...), register_buffer(...): floating ones are cast too.
    for (auto& [attribute, value] : o.attributes)
      if (value.is(Kind::Tensor) && value.convertsWithModule && !value.dtype.isBottom() &&
          (value.dtype.allFloating() || value.dtype.isUnknown())) {
        value.dtype = to;
        value.origin = origin;
      }
  }
  // The optimizers made over these parameters before the conversion.
  for (auto& [optimizerId, o] : state.heap)
    if (o.type == Object::Type::Optimizer && std::find(tree.begin(), tree.end(), o.module) != tree.end()) {
      std::optional<Note> parametersOrigin;
      const DtypeSet now = parametersOf(o.module, state, &parametersOrigin);
      state.protocol.parametersBecame(ObjectRef{optimizerId, o.name}, now, parametersOrigin);
      if (o.epsilon && now.single()) checkEpsilon(o, now, parametersOrigin);
    }
}

// DL304 at the optimizer's construction, an eps given on another line a note.
void Interpreter::checkEpsilon(const Object& optimizer, DtypeSet parameters, const std::optional<Note>& origin) {
  const size_t before = findings_.size();
  checkOptimizerEpsilon("'" + optimizer.typeName + "'", *optimizer.epsilon, parameters, origin, optimizer.createdAt,
                        findings_);
  if (findings_.size() > before && optimizer.epsilonGivenAt &&
      optimizer.epsilonGivenAt->line != optimizer.createdAt.line)
    findings_.back().notes.push_back(Note{*optimizer.epsilonGivenAt, "eps given here"});
}

Value Interpreter::castTensor(const Value& tensor, DtypeSet to, const Node& at, State& state) {
  Value v = Value::tensor(
      to, noteAt(at, fmt::format("{} became {} here", tensor.description.empty() ? "the tensor" : tensor.description,
                                 to.toString())));
  if (!state.autocast.definitelyOff() && to.single() && !tensor.dtype.isUnknown())
    v.castInAutocast = ExplicitCast{tensor.dtype, *to.single(), at.location()};
  return v;
}

// DL107: a step while autocast's cache holds copies of the old weights.
void Interpreter::optimizerStepped(const ObjectRef& optimizer, const SourceLocation& at, State& state,
                                   const Frame& frame) {
  if (!state.autocastCache.filledAt) return;
  OptimizerStepEvent step;
  step.location = at;
  step.optimizer = optimizer.name.empty() ? "the optimizer" : optimizer.name;
  step.autocast = state.autocast;
  step.autocastCache = state.autocastCache;
  step.callChain = frame.callChain;
  // Inside a `with` region: reported once a forward in the region uses the stale copies.
  if (state.autocastRegions > 0 && !state.autocastBySetter) {
    if (!state.stepInRegion) state.stepInRegion = std::move(step);
    return;
  }
  rules_.onOptimizerStep(step, findings_);
}

bool Interpreter::emitOp(OpEvent event, State& state, Frame& frame) {
  event.autocast = state.autocast;
  event.callChain = frame.callChain;
  event.inCustomBackward = frame.inCustomBackward;
  event.forwardUnderAutocast = frame.forwardUnderAutocast;
  event.writtenInFile = false;  // no fixes from the Python front end yet
  rules_.onOp(event, findings_);
  return rules_.raises(event);
}

std::vector<Value> Interpreter::Call::tensorArgs() const {
  std::vector<Value> tensors;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is(Kind::Tensor)) continue;
    tensors.push_back(args[i]);
    if (tensors.back().description.empty() && i < argNodes.size() && argNodes[i])
      tensors.back().description = describe(argNodes[i]);
  }
  return tensors;
}

Value Interpreter::tensorOp(const std::string& op, const std::vector<Value>& inputs, Call& call, State& state,
                            Frame& frame, bool explicitDtype, const Value* destination) {
  OpEvent event;
  event.op = op;
  event.location = call.node.location();
  event.explicitDtype = explicitDtype;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is(Kind::Tensor)) continue;
    Operand operand;
    // Inputs that are the call's arguments one for one (a binary operator's) are described by them.
    const bool byArgument = inputs.size() == call.argNodes.size() && call.argNodes[i];
    operand.description =
        inputs[i].description.empty() && byArgument ? describe(call.argNodes[i]) : inputs[i].description;
    operand.dtype = inputs[i].dtype;
    operand.origin = inputs[i].origin;
    operand.castInAutocast = inputs[i].castInAutocast;
    event.inputs.push_back(std::move(operand));
  }
  if (destination && destination->is(Kind::Tensor)) {
    Operand out;
    out.description = destination->description;
    out.dtype = destination->dtype;
    out.origin = destination->origin;
    event.destination = out;
  }
  // x.sum(), torch.sum(x): no dim among the arguments (a method's call.args leave out self).
  if (needsFullReductionToBeSensitive(op))
    event.reducesAllDims = !call.kw("dim") && std::all_of(call.args.begin(), call.args.end(),
                                                          [](const Value& a) { return a.is(Kind::Tensor); });
  if (emitOp(event, state, frame)) return Value::unknown();
  // The result's dtype: autocast's cast, else the op's own rule.
  DtypeSet result = DtypeSet::unknown();
  const Tristate casts = rules_.autocastCasts(op, state.autocast);
  if (casts == Tristate::On) {
    result = autocastResult(op, state.autocast);
  } else if (casts == Tristate::Off && !event.inputs.empty()) {
    DtypeSet joined = event.inputs.front().dtype;
    bool same = true;
    for (const Operand& o : event.inputs) same = same && o.dtype == joined;
    if (same) result = joined;
    else if (promotesOperands(op)) {
      auto a = event.inputs[0].dtype.single(), b = event.inputs.size() > 1 ? event.inputs[1].dtype.single() : a;
      if (a && b) result = DtypeSet(promote(*a, *b));
    } else if (const auto input = joined.single(); input && isFloating(*input) && takesClassIndices(op)) {
      result = joined;  // nll_loss(log_probs, targets): the input's dtype, whatever the indices' is
    }
  }
  if (destination && destination->is(Kind::Tensor)) return *destination;
  return Value::tensor(result);
}

// An op that keeps its input's dtype, unless autocast casts it (softplus runs in Float).
Value Interpreter::dtypePreserved(const std::string& op, const Value& input, const State& state) const {
  const Tristate casts = rules_.autocastCasts(op, state.autocast);
  if (casts == Tristate::On) return Value::tensor(autocastResult(op, state.autocast));
  if (casts == Tristate::Unknown) return Value::tensor(DtypeSet::unknown());
  Value v = input;
  v.description.clear();
  v.castInAutocast.reset();
  return v;
}

Value Interpreter::callTensorMethod(const Value& self, const std::string& method, Call& call, State& state,
                                    Frame& frame) {
  if (auto to = conversionMethod(method)) return castTensor(self, DtypeSet(*to), call.node, state);
  // for p in model.parameters(): p.requires_grad_(False), one parameter standing for all.
  if (method == "requires_grad_" && self.parameterOf) {
    const Value* wanted = call.arg(0, "requires_grad");
    setFrozen(self.parameterOf, wanted ? wanted->truth() == false : false, call.node, state);
    return self;
  }
  if (method == "type_as" && !call.args.empty() && call.args[0].is(Kind::Tensor))
    return castTensor(self, call.args[0].dtype, call.node, state);
  if (method == "to" || method == "type") {
    for (const Value* arg :
         std::initializer_list<const Value*>{call.kw("dtype"), call.args.empty() ? nullptr : &call.args[0],
                                             call.args.size() > 1 ? &call.args[1] : nullptr}) {
      if (!arg) continue;
      if (arg->is(Kind::Dtype)) return castTensor(self, arg->dtype, call.node, state);
      if (arg->is(Kind::Tensor)) return castTensor(self, arg->dtype, call.node, state);
    }
    // x.to(ref.dtype), x.to(self.compute_dtype): a dtype not known here.
    const bool namesADtype =
        call.kw("dtype") || std::any_of(call.argNodes.begin(), call.argNodes.end(),
                                        [](const Node& n) { return n.text().find("dtype") != std::string_view::npos; });
    if (call.spread) return Value::unknown();
    if (!namesADtype) return self;  // a device
    Value converted = self;
    converted.dtype = DtypeSet::unknown();
    converted.description.clear();
    return converted;
  }
  if (method == "backward") {
    tensorOp("backward", {self}, call, state, frame);
    state.protocol.unscaledBackward(call.node.location());
    if (self.manual) {
      // A hand-written dynamic scaler checks the gradients for inf/NaN in the same file.
      const std::string& text = call.node.file().text();
      const bool checksNonFinite = text.find("isfinite") != std::string::npos ||
                                   text.find("isinf") != std::string::npos || text.find("isnan") != std::string::npos;
      state.manualScaling.backward(*self.manual, self.factor, call.node.location(), checksNonFinite, findings_);
    }
    return Value::none();
  }
  // p.grad.div_(LOSS_SCALE), p.grad.mul_(1 / LOSS_SCALE): the scale divided back by hand.
  if (self.isGradient && (method == "div_" || method == "mul_") && !call.argNodes.empty()) {
    Node factor = call.argNodes[0];
    if (method == "mul_" && factor.is("binary_operator") && factor.field("operator").text() == "/")
      factor = factor.field("right");
    if (factor.is("identifier") || factor.is("attribute"))
      state.manualScaling.gradientsDividedBy(std::hash<std::string>{}(std::string(factor.text())), call.node.location(),
                                             findings_);
    return self;
  }
  if (method == "item" || method == "tolist" || method == "numel" || method == "dim" || method == "size")
    return Value::unknown();
  // x.addmm_(a, b), x.mul_(y): self is the destination (and an operand, but of a matmul).
  if (auto base = inPlaceBase(method);
      base && (isMatmulFamily(*base) || computesInInputDtype(*base) || *base == "copy" || copiesSourceExactly(*base))) {
    std::vector<Value> inputs;
    if (!isMatmulFamily(*base) && *base != "copy" && !copiesSourceExactly(*base)) inputs.push_back(self);
    for (Value& arg : call.tensorArgs()) inputs.push_back(std::move(arg));
    tensorOp(method, inputs, call, state, frame, false, &self);
    return self;
  }
  std::vector<Value> inputs{self};
  for (Value& arg : call.tensorArgs()) inputs.push_back(std::move(arg));
  const Value* dtype = call.kw("dtype");
  if (dtype && dtype->is(Kind::Dtype) && (isPrecisionSensitive(method) || needsFullReductionToBeSensitive(method))) {
    tensorOp(method, inputs, call, state, frame, /*explicitDtype=*/true);
    return Value::tensor(dtype->dtype);
  }
  if (isMatmulFamily(method) || isPrecisionSensitive(method) || promotesOperands(method) || onAnAutocastList(method))
    return tensorOp(method, inputs, call, state, frame);
  if (preservesDtype(method)) return dtypePreserved(method, self, state);
  if (method == "split" || method == "chunk" || method == "unbind" || method == "tensor_split") {
    Value pieces = Value::make(Kind::List);  // pieces of the tensor's dtype
    pieces.itemsStandForMore = true;
    pieces.items = {dtypePreserved("view", self, state)};
    return pieces;
  }
  if (returnsBool(method)) return Value::tensor(DtypeSet(ScalarType::Bool));
  if (returnsLong(method)) return Value::tensor(DtypeSet(ScalarType::Int64));
  return Value::unknown();
}

Value Interpreter::optimizerFor(const std::string& className, Call& call, State& state) {
  Object optimizer;
  optimizer.type = Object::Type::Optimizer;
  optimizer.typeName = className;
  const Value* params = call.arg(0, "params");
  DtypeSet dtype = DtypeSet::unknown();
  std::optional<Note> origin;
  if (params && (params->is(Kind::Parameters) || gatheredParameters(*params))) {
    optimizer.module = params->is(Kind::Parameters) ? params->object : gatheredParameters(*params);
    dtype = parametersOf(optimizer.module, state, &origin);
  } else if (params && params->is(Kind::List)) {
    // Parameter groups: [{"params": enc.parameters(), "lr": ...}, ...]. A
    // trainable group of Half (or BFloat16) parameters is what unscale_()
    // and eps see, whatever the other groups hold.
    DtypeSet joined;
    std::optional<DtypeSet> lowPrecision;
    std::optional<Note> lowPrecisionOrigin;
    bool allKnown = !params->items.empty();
    for (const Value& group : params->items) {
      const Value* groupParams = nullptr;
      if (group.is(Kind::Parameters)) groupParams = &group;
      if (group.is(Kind::Dict))
        for (size_t i = 0; i < group.keys.size(); ++i)
          if (group.keys[i].is(Kind::String) && group.keys[i].text == "params") groupParams = &group.items[i];
      const ObjectId module = !groupParams                        ? 0
                              : groupParams->is(Kind::Parameters) ? groupParams->object
                                                                  : gatheredParameters(*groupParams);
      if (!module) {
        allKnown = false;
        continue;
      }
      if (!optimizer.module) optimizer.module = module;
      std::optional<Note> groupOrigin;
      const DtypeSet groupDtype = parametersOf(module, state, &groupOrigin);
      if (!origin) origin = groupOrigin;
      joined = joined.join(groupDtype);
      const auto single = groupDtype.single();
      if (single && isLowPrecisionFloat(*single) && !allFrozen(module, state) &&
          (!lowPrecision || *single == ScalarType::Half)) {
        lowPrecision = groupDtype;
        lowPrecisionOrigin = groupOrigin;
      }
    }
    if (allKnown) dtype = joined;
    if (allKnown && lowPrecision && !joined.isUnknown()) {
      dtype = *lowPrecision;
      origin = lowPrecisionOrigin;
    }
  }
  // DL304: the eps the optimizer uses, given or its default; checked again
  // where its parameters change dtype later (model.half() after it was made).
  std::optional<double> eps = defaultEpsilon(className);
  if (const Value* given = call.kw("eps"); given && given->is(Kind::Number)) eps = given->number;
  else if (call.kw("eps") || call.spread) eps.reset();
  optimizer.epsilon = eps;
  optimizer.createdAt = call.node.location();
  if (const auto givenEps = call.kwargNodes.find("eps"); givenEps != call.kwargNodes.end())
    optimizer.epsilonGivenAt = givenEps->second.location();
  const ObjectId module = optimizer.module;
  Value v = makeObject(std::move(optimizer), state);
  state.protocol.declareOptimizer(ObjectRef{v.object, ""}, dtype, origin, module);
  if (eps && dtype.single()) checkEpsilon(state.heap.at(v.object), dtype, origin);
  return v;
}

Value Interpreter::autocastRegion(const std::string& name, Call& call) {
  Value region = Value::make(Kind::Autocast);
  region.enabled = Tristate::On;
  region.flag = true;  // an autocast region (nullcontext() is one with nothing to change)
  if (isLibraryName(name, "torch.cuda.amp.autocast")) region.text = "cuda";
  else if (isLibraryName(name, "torch.cpu.amp.autocast")) region.text = "cpu";
  else if (const Value* device = call.arg(0, "device_type"); device && device->is(Kind::String))
    region.text = device->text;
  else region.text = "";
  if (const Value* dtype = call.arg(
          isLibraryName(name, "torch.autocast") || isLibraryName(name, "torch.amp.autocast") ? 1 : 99, "dtype")) {
    region.dtype = dtype->is(Kind::Dtype) ? dtype->dtype : DtypeSet::unknown();
  }
  if (const Value* enabled = call.arg(isLibraryName(name, "torch.cuda.amp.autocast") ? 0 : 99, "enabled")) {
    const auto truth = test(*enabled);
    region.enabled = truth ? (*truth ? Tristate::On : Tristate::Off) : Tristate::Unknown;
  }
  return region;
}

Value Interpreter::callLibrary(const std::string& name, Call& call, State& state, Frame& frame) {
  const Node at = call.node;
  const std::string last = name.substr(name.rfind('.') + 1);
  // Settings read at run time: their defaults.
  if (name == "os.getenv" || name == "os.environ.get") {
    const Value byDefault =
        call.args.size() > 1 ? call.args[1] : (call.kw("default") ? *call.kw("default") : Value::none());
    if (call.args.empty() || !call.args[0].is(Kind::String)) return Value::unknown();
    return readSetting("$" + call.args[0].text, at, byDefault);
  }
  // Which low precision the GPU has (`dtype = "bfloat16" if torch.cuda.is_bf16_supported()
  // else "float16"`): both, as the machines a script runs on differ.
  if (name == "torch.cuda.is_bf16_supported") return readSetting(name + "()", at, Value::boolean(true));
  // A training script runs where its GPU is (the C++ analyzer assumes so too).
  if (name == "torch.cuda.is_available") return Value::boolean(true);
  // nanoGPT's configurator, `exec(open("configurator.py").read())` at the top
  // level: a config file or `--key=value` may override any plain global.
  if (name == "exec" && frame.topLevel) {
    for (auto& [global, value] : state.locals)
      if ((value.is(Kind::Bool) || value.is(Kind::Number) || value.is(Kind::String)) && value.setting == 0 &&
          global.rfind("_", 0) != 0)
        value = readSetting("--" + global, at, value);
    return Value::none();
  }
  if (name == "getattr" && call.args.size() >= 2 && call.args[1].is(Kind::String)) {
    const Value& object = call.args[0];
    if (object.is(Kind::Name)) {
      const std::string dotted = object.text + "." + call.args[1].text;
      if (auto dtype = torchDtype(dotted)) {
        // getattr(torch, args.amp_dtype): the setting chooses the dtype, as a dict of dtypes would.
        settingUsed(call.args[1], {}, /*lookup=*/true);
        if (Setting* setting = settingOf(call.args[1])) setting->choosesDtype = true;
        return Value::dtypeOf(DtypeSet(*dtype));
      }
      return Value::name(dotted);
    }
    // getattr(callback, hook)(trainer): an attribute or a bound method, as `callback.on_after_backward`.
    if (object.is(Kind::Object) && state.heap.count(object.object))
      if (Value a = attributeOf(object, call.args[1].text, call.node, state, frame); !a.is(Kind::Unknown)) return a;
    return call.args.size() > 2 ? call.args[2] : Value::unknown();
  }
  // getattr(model, name) walking a dotted path (a LoRA helper's _get_submodules).
  if (name == "getattr" && call.args.size() == 2 && call.args[0].is(Kind::Object) &&
      state.heap.at(call.args[0].object).isModule)
    return someSubmodule(call.args[0].object, state);
  if (name == "setattr" && call.args.size() == 3 && call.args[0].is(Kind::Object)) {
    overwriteAttribute(call.args[0].object, call.args[1], call.args[2], at, state);
    return Value::none();
  }
  if (name == "str" && !call.args.empty() && call.args[0].is(Kind::String)) return call.args[0];
  // functools.partial(torch.autocast, "cuda", dtype=amp_dtype): the callee with its first arguments bound.
  if (name == "functools.partial" && !call.args.empty() && !call.spread) {
    Value bound = Value::make(Kind::Partial);
    Value args = Value::make(Kind::List);
    args.items.assign(call.args.begin() + 1, call.args.end());
    Value keywords = Value::make(Kind::Dict);
    for (const auto& [keyword, value] : call.kwargs) {
      keywords.keys.push_back(Value::string(keyword));
      keywords.items.push_back(value);
    }
    bound.items = {call.args[0], std::move(args), std::move(keywords)};
    return bound;
  }
  // A dataclass field's default: field(default=v), field(default_factory=LoraConfig).
  if (name == "dataclasses.field" || name == "field") {
    if (const Value* byDefault = call.kw("default")) return *byDefault;
    if (const Value* factory = call.kw("default_factory")) {
      Call none;
      none.node = call.node;
      return callValue(*factory, none, state, frame);
    }
    return Value::unknown();
  }
  // math.sqrt(2.0 / math.pi): a number, which scales a tensor without changing its dtype.
  if (name.rfind("math.", 0) == 0 && !call.args.empty() &&
      std::all_of(call.args.begin(), call.args.end(), [](const Value& a) { return a.is(Kind::Number); }))
    if (auto result = mathFunction(last, call.args)) return Value::numeric(*result);
  if (!call.spread && call.kwargs.empty())
    if (auto path = pathFunction(name, call.args)) return *path;
  if (name == "isinstance" && call.args.size() == 2) {
    if (auto instance = isInstanceOfClass(call.args[0], call.args[1], state)) return Value::boolean(*instance);
    return isInstance(call.args[0], call.args[1]);
  }
  // sum(loss_dict.values()): a tensor, of the terms' dtype where they share one.
  if (name == "sum" && call.args.size() == 1 && call.args[0].is(Kind::List) && !call.args[0].items.empty() &&
      std::all_of(call.args[0].items.begin(), call.args[0].items.end(),
                  [](const Value& term) { return term.is(Kind::Tensor); })) {
    const DtypeSet first = call.args[0].items.front().dtype;
    const bool alike = first.single() && std::all_of(call.args[0].items.begin(), call.args[0].items.end(),
                                                     [&](const Value& term) { return term.dtype == first; });
    return Value::tensor(alike ? first : DtypeSet::unknown());
  }
  // EasyDict(yaml.safe_load(f)): a dict read by attribute too.
  if (name == "easydict.EasyDict" && call.args.size() == 1 && call.args[0].is(Kind::Dict)) return call.args[0];
  if (name == "bool" && !call.args.empty() && call.args[0].truth()) {
    Value b = Value::boolean(*call.args[0].truth());
    b.setting = call.args[0].setting;
    return b;
  }
  // Configuration files: open(path), then json.load(f) / yaml.safe_load(f).
  if (name == "open" && !call.args.empty() && call.args[0].is(Kind::String)) {
    Value file = Value::make(Kind::File);
    file.text = call.args[0].text;
    return file;
  }
  if ((name == "json.load" || name == "yaml.safe_load" || name == "yaml.load" || name == "yaml.full_load" ||
       name == "tomllib.load" || name == "toml.load") &&
      !call.args.empty())
    return loadConfigFile(call.args[0].is(Kind::File) ? call.args[0].text : "", at.file().path());
  // json.loads(f.read()), json.loads(path.read_text()): the file's text.
  if ((name == "json.loads" || name == "tomllib.loads" || name == "toml.loads") && !call.args.empty() &&
      call.args[0].is(Kind::File))
    return loadConfigFile(call.args[0].text, at.file().path());
  if (name == "int" || name == "float") return call.args.empty() ? Value::unknown() : asNumber(call.args[0]);
  // range(1), range(d_steps) with its value known: that many iterations, when few.
  if (name == "range" && !call.args.empty() && call.args.size() <= 2 && !call.spread &&
      std::all_of(call.args.begin(), call.args.end(), [](const Value& v) { return v.is(Kind::Number); })) {
    // A count that is a setting of 1 (gradient-accumulation steps) is also analyzed at 2: one iteration hides repeats.
    if (call.args.size() == 1 && call.args[0].number == 1) settingUsed(call.args[0], {Value::numeric(2)});
    const double from = call.args.size() == 2 ? call.args[0].number : 0, to = call.args.back().number;
    if (to - from < 1 || to - from > kItemsIteratedOneByOne || from != std::floor(from) || to != std::floor(to))
      return Value::unknown();
    Value iterations = Value::make(Kind::List);
    for (double i = from; i < to; ++i) iterations.items.push_back(Value::numeric(i));
    return iterations;
  }
  // for i, x in enumerate(xs), for a, b in zip(xs, ys): one element stands for all.
  // nanoGPT-style configs: config = dict(dtype="bfloat16", ...); cfg = type("Cfg", (), config).
  // dict(preset), copy.deepcopy(defaults): a copy of a dict is that dict.
  if ((name == "dict" || name == "copy.copy" || name == "copy.deepcopy") && call.args.size() == 1 &&
      call.args[0].is(Kind::Dict) && call.kwargs.empty())
    return call.args[0];
  // dict(DEFAULTS, lr=args.lr): a copy with those keys set.
  if (name == "dict" && call.args.size() == 1 && call.args[0].is(Kind::Dict) && !call.args[0].fromConfigFile &&
      !call.spread) {
    Value merged = call.args[0];
    for (const auto& [key, value] : call.kwargs) itemOf(merged, Value::string(key)) = value;
    return merged;
  }
  if (name == "dict" && call.args.empty() && !call.spread) {
    Value dict = Value::make(Kind::Dict);
    for (const auto& [key, value] : call.kwargs) {
      dict.keys.push_back(Value::string(key));
      dict.items.push_back(value);
    }
    return dict;
  }
  // SimpleNamespace(**section), argparse.Namespace(lr=1e-3): an object of those attributes.
  if ((name == "types.SimpleNamespace" || name == "argparse.Namespace") && call.args.empty() && !call.spread) {
    Object settings;
    settings.type = Object::Type::Settings;
    settings.typeName = last;
    for (const auto& [key, value] : call.kwargs) settings.attributes[key] = value;
    return makeObject(std::move(settings), state);
  }
  // type(default) of a setting's default: the builtin that parses it (`cast = type(default); cast(raw)`).
  if (name == "type" && call.args.size() == 1) {
    const Value& of = call.args[0];
    if (of.is(Kind::String)) return Value::name("str");
    if (of.is(Kind::Bool)) return Value::name("bool");
    if (of.is(Kind::Number)) return Value::name(of.number == std::floor(of.number) ? "int" : "float");
    return Value::unknown();
  }
  if (name == "type" && call.args.size() == 3 && call.args[2].is(Kind::Dict)) {
    Object settings;
    settings.type = Object::Type::Settings;
    settings.typeName = call.args[0].is(Kind::String) ? call.args[0].text : "type";
    const Value& attributes = call.args[2];
    for (size_t i = 0; i < attributes.keys.size(); ++i)
      if (attributes.keys[i].is(Kind::String)) settings.attributes[attributes.keys[i].text] = attributes.items[i];
    return makeObject(std::move(settings), state);
  }
  // itertools.chain(unet.parameters(), text_encoder.parameters()): the parameters of each, as groups.
  if (name == "itertools.chain" && !call.spread && !call.args.empty() &&
      std::all_of(call.args.begin(), call.args.end(), [](const Value& v) { return v.is(Kind::Parameters); })) {
    Value groups = Value::make(Kind::List);
    groups.items = call.args;
    return groups;
  }
  // vars(args): a namespace's or config object's attributes, by name (TrainConfig(**vars(args))).
  if (name == "vars" && call.args.size() == 1 && call.args[0].is(Kind::Object)) {
    const Object& object = state.heap.at(call.args[0].object);
    if (object.isModule || (object.type != Object::Type::Settings && object.type != Object::Type::Instance))
      return Value::unknown();
    Value attributes = Value::make(Kind::Dict);
    for (const auto& [key, value] : object.attributes) {
      attributes.keys.push_back(Value::string(key));
      attributes.items.push_back(value);
    }
    return attributes;
  }
  // A DataLoader's batches: its dataset's samples collated, each tensor
  // stacked in its dtype. TensorDataset(x, y)'s sample is (x[i], y[i]); a
  // Dataset class of the program's gives what its __getitem__ returns.
  if (name == "torch.utils.data.TensorDataset") {
    Value sample = Value::make(Kind::List);
    for (const Value& tensor : call.args)
      sample.items.push_back(tensor.is(Kind::Tensor) ? Value::tensor(tensor.dtype, tensor.origin) : Value::unknown());
    Value samples = Value::make(Kind::List);
    samples.items = {sample};
    samples.itemsStandForMore = true;
    return samples;
  }
  if (name == "torch.utils.data.DataLoader" && !call.args.empty()) {
    Value sample = Value::unknown();
    const Value& dataset = call.args[0];
    if (dataset.is(Kind::List) && dataset.itemsStandForMore && dataset.items.size() == 1) sample = dataset.items[0];
    if (auto object = dataset.is(Kind::Object) ? state.heap.find(dataset.object) : state.heap.end();
        object != state.heap.end() && object->second.cls)
      if (const FunctionInfo* getItem = findMethod(*object->second.cls, "__getitem__")) {
        Call indexing;
        indexing.node = call.node;
        indexing.args = {Value::unknown()};
        State probe = state;  // the samples are read, not the program's state changed
        sample = callFunction(*getItem, dataset, indexing, probe, frame);
      }
    Value batch = collated(sample);
    // collate_fn=collate, a function of the program's: the batch it makes of the samples.
    if (const Value* collate = call.kw("collate_fn"); collate && collate->is(Kind::Function)) {
      Call collating;
      collating.node = call.node;
      Value samples = Value::make(Kind::List);
      samples.items = {sample};
      samples.itemsStandForMore = true;
      collating.args = {samples};
      collating.argNodes = {Node()};
      collating.captured = collate->captured;
      State probe = state;
      batch = callFunction(*collate->function, std::nullopt, collating, probe, frame);
    }
    Value batches = Value::make(Kind::List);
    batches.items = {batch};
    batches.itemsStandForMore = true;
    return batches;
  }
  if (name == "enumerate" || name == "zip") {
    Value tuple = Value::make(Kind::List);
    if (name == "enumerate") tuple.items.push_back(Value::unknown());
    for (const Value& arg : call.args) tuple.items.push_back(elementOf(arg, state));
    Value iterable = Value::make(Kind::List);
    iterable.items = {tuple};
    iterable.itemsStandForMore = true;
    return iterable;
  }
  if (name == "filter" && call.args.size() == 2 && call.args[1].is(Kind::Parameters)) return call.args[1];
  // list(model.parameters()), list(callbacks), tuple(items): the same items.
  if ((name == "list" || name == "tuple") && call.args.size() == 1 &&
      (call.args[0].is(Kind::Parameters) || call.args[0].is(Kind::List)))
    return call.args[0];
  if ((name == "list" || name == "tuple") && call.args.size() == 1 && call.args[0].is(Kind::Class))
    return iterated(call.args[0], state);  // list(Precision): the members
  // choices=sorted(DTYPES), list(DTYPES): the dict's keys (their order does not matter to a setting).
  if ((name == "list" || name == "tuple" || name == "sorted") && call.args.size() == 1 && call.args[0].is(Kind::Dict) &&
      !call.args[0].itemsStandForMore) {
    Value keys = Value::make(Kind::List);
    keys.items = call.args[0].keys;
    return keys;
  }
  if (name == "sorted" && call.args.size() == 1 && call.args[0].is(Kind::List)) return call.args[0];
  if (isLibraryName(name, "configparser.ConfigParser") || isLibraryName(name, "configparser.RawConfigParser")) {
    Object parser;
    parser.type = Object::Type::ConfigParser;
    parser.typeName = "ConfigParser";
    // ConfigParser(defaults=DEFAULTS): the DEFAULT section, which every section falls back to.
    if (const Value* defaults = call.kw("defaults"); defaults && defaults->is(Kind::Dict))
      parser.attributes["DEFAULT"] = *defaults;
    return makeObject(std::move(parser), state);
  }
  if (isLibraryName(name, "argparse.ArgumentParser")) {
    Object parser;
    parser.type = Object::Type::ArgumentParser;
    parser.typeName = "ArgumentParser";
    return makeObject(std::move(parser), state);
  }
  if (isLibraryName(name, "contextlib.nullcontext")) {
    Value region = Value::make(Kind::Autocast);
    region.enabled = Tristate::Off;
    return region;
  }
  if (isAutocastName(name)) return autocastRegion(name, call);
  // torch.device("cuda"), torch.device("cuda", 0): the device's name.
  if (isLibraryName(name, "torch.device") && !call.args.empty() && call.args[0].is(Kind::String)) return call.args[0];
  // Autocast switched by hand: torch.set_autocast_enabled(True),
  // torch.set_autocast_enabled("cuda", True), set_autocast_gpu_dtype(...).
  if (name == "torch.set_autocast_enabled" || name == "torch.set_autocast_cpu_enabled" ||
      name == "torch.set_autocast_gpu_dtype" || name == "torch.set_autocast_cpu_dtype" ||
      name == "torch.set_autocast_dtype") {
    // The device first: a name, or one not known here (`self.device_type`), taken as CUDA.
    const bool named = (!call.args.empty() && call.args[0].is(Kind::String)) || call.args.size() == 2;
    const std::string device = named && call.args[0].is(Kind::String)  ? call.args[0].text
                               : name.find("cpu") != std::string::npos ? "cpu"
                                                                       : "cuda";
    DeviceAutocast& autocast = device == "cpu" ? state.autocast.cpu : state.autocast.cuda;
    const Value* value = call.args.size() > (named ? 1u : 0u) ? &call.args[named ? 1 : 0] : nullptr;
    if (name.find("enabled") != std::string::npos) {
      const std::optional<bool> on = value ? test(*value) : std::nullopt;
      if (on == true) state.autocastBySetter = true;
      if (on == false && state.autocastCache.filledAt) state.autocastCache.regionLeftAt = at.location();
      autocast.enabled = on ? (*on ? Tristate::On : Tristate::Off) : Tristate::Unknown;
      if (autocast.enabled != Tristate::Off) autocast.enabledAt = at.location();
      if (autocast.dtype.isBottom() || autocast.dtype.isUnknown())
        autocast.dtype = DtypeSet(device == "cpu" ? ScalarType::BFloat16 : ScalarType::Half);
    } else {
      autocast.dtype = value && value->is(Kind::Dtype) ? value->dtype : DtypeSet::unknown();
    }
    return Value::none();
  }
  if (name == "torch.clear_autocast_cache") {
    state.autocastCache = AutocastCacheState{};
    return Value::none();
  }
  // torch.is_autocast_enabled(), or of a device: is_autocast_enabled("cpu").
  if (name == "torch.is_autocast_enabled" &&
      (call.args.empty() || (call.args.size() == 1 && call.args[0].is(Kind::String)))) {
    const bool cpu = !call.args.empty() && call.args[0].text == "cpu";
    const Tristate on = cpu ? state.autocast.cpu.enabled : state.autocast.cuda.enabled;
    return on == Tristate::Unknown ? Value::unknown() : Value::boolean(on == Tristate::On);
  }
  if (isLibraryName(name, "torch.amp.GradScaler") || isLibraryName(name, "torch.cuda.amp.GradScaler") ||
      isLibraryName(name, "torch.cpu.amp.GradScaler") || (last == "GradScaler" && name.rfind("torch.", 0) == 0)) {
    Object scaler;
    scaler.type = Object::Type::Scaler;
    scaler.typeName = "GradScaler";
    const Value* enabled = call.arg(99, "enabled");
    const std::optional<bool> on = enabled ? test(*enabled) : std::optional<bool>(true);
    scaler.enabled = on;
    const bool declared = on != false;
    Value v = makeObject(std::move(scaler), state);
    // Made by a wrapper (timm's NativeScaler: `self._scaler = GradScaler()`): the program's scaler is made where it is.
    SourceLocation madeAt = at.location();
    for (auto wrapper = constructing_.rbegin(); wrapper != constructing_.rend(); ++wrapper) {
      std::string name = wrapper->first;
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      if (name.find("scaler") == std::string::npos) continue;
      madeAt = wrapper->second;
      break;
    }
    if (declared) state.protocol.declareScaler(ObjectRef{v.object, ""}, on != true, false, madeAt);
    return v;
  }
  if (name.rfind("torch.optim.", 0) == 0 && name.find("lr_scheduler") == std::string::npos && !last.empty() &&
      std::isupper(static_cast<unsigned char>(last[0])))
    return optimizerFor(last, call, state);
  if (name == "torch.nn.utils.clip_grad_norm_" || name == "torch.nn.utils.clip_grad_value_") {
    // model.parameters(), or a list of some module's parameters; parameters
    // whose module is not known (a helper's list) are any optimizer's.
    if (const Value* params = call.arg(0, "parameters")) {
      ObjectId module = params->is(Kind::Parameters) ? params->object : 0;
      if (params->is(Kind::List) && !params->items.empty()) {
        module = params->items.front().parameterOf;
        for (const Value& item : params->items)
          if (item.parameterOf != module) module = 0;
      }
      state.protocol.clip(nullptr, module, at.location(), findings_);
    }
    return Value::tensor(DtypeSet(ScalarType::Float));
  }
  if (last == "from_pretrained") {
    Object model;
    model.type = Object::Type::Pretrained;
    model.typeName = name;
    model.isModule = true;
    const Value* dtype = call.kw("torch_dtype");
    if (!dtype) dtype = call.kw("dtype");
    if (!dtype) model.parameters = DtypeSet(ScalarType::Float);
    else if (dtype->is(Kind::Dtype)) model.parameters = dtype->dtype;
    else model.parameters = DtypeSet::unknown();
    if (dtype && dtype->is(Kind::Dtype))
      model.parametersOrigin = noteAt(at, fmt::format("loaded with torch_dtype={} here", dtype->dtype.toString()));
    // Tokenizers, configs and processors have from_pretrained too: only a model's matters.
    if (name.find("Tokenizer") != std::string::npos || name.find("Config") != std::string::npos ||
        name.find("Processor") != std::string::npos)
      return Value::unknown();
    return makeObject(std::move(model), state);
  }
  // Wrappers that hand the model back.
  // Reparametrizations (spectral_norm, weight_norm) keep the module's dtype.
  if ((name == "torch.compile" || last == "get_peft_model" || last == "prepare_model_for_kbit_training" ||
       last == "DistributedDataParallel" || last == "DataParallel" || last == "FullyShardedDataParallel" ||
       ((name.rfind("torch.nn.utils.", 0) == 0) && (last == "spectral_norm" || last == "weight_norm"))) &&
      !call.args.empty() && call.args[0].is(Kind::Object)) {
    // PEFT adds adapters (Float where the base is Half) and casts some layers: their dtypes are not known.
    if (last == "get_peft_model" || last == "prepare_model_for_kbit_training")
      forgetParameters(call.args[0].object, state);
    return call.args[0];
  }
  if (name == "torch.nn.Parameter" || name == "torch.nn.parameter.Parameter") {
    const Value* data = call.arg(0, "data");
    Value parameter = data && data->is(Kind::Tensor) ? *data : Value::tensor(DtypeSet::unknown());
    parameter.convertsWithModule = true;
    parameter.isParameter = true;
    return parameter;
  }
  // Vision models built by a library: Float parameters, logits out.
  if (name == "timm.create_model" ||
      (name.rfind("torchvision.models.", 0) == 0 && !last.empty() &&
       std::islower(static_cast<unsigned char>(last[0])) && name.find(".detection.") == std::string::npos &&
       name.find(".segmentation.") == std::string::npos)) {
    Object model;
    model.type = Object::Type::Pretrained;
    model.typeName = name;
    model.isModule = true;
    model.returnsTensor = true;
    return makeObject(std::move(model), state);
  }
  if (name == "copy.deepcopy" && !call.args.empty() && call.args[0].is(Kind::Object))
    return Value::objectRef(Kind::Object, deepCopy(call.args[0].object, state));
  if (name.rfind("torch.nn.", 0) == 0 && !last.empty() && std::isupper(static_cast<unsigned char>(last[0])) &&
      name.find("torch.nn.functional") != 0 && name.find("torch.nn.utils") != 0) {
    Object module;
    module.isModule = true;
    module.typeName = last;
    const LayerKind layer = layerKind(last);
    if (layer.container && call.spread && call.spreadItems.empty()) {
      module.parameters = DtypeSet::unknown();  // which modules, in which order, is not known
    } else if (layer.container) {
      module.type = Object::Type::Container;
      for (const Value& item : call.spreadItems)
        if (item.is(Kind::Object)) module.children.push_back(item.object);
      for (const Value& arg : call.args) {
        if (arg.is(Kind::Object)) module.children.push_back(arg.object);
        if (arg.is(Kind::List))
          for (const Value& item : arg.items)
            if (item.is(Kind::Object)) module.children.push_back(item.object);
        // ModuleDict(dict(wte=..., h=...)): its modules by key, `md.wte` or `md["wte"]`.
        if (arg.is(Kind::Dict))
          for (size_t i = 0; i < arg.items.size(); ++i) {
            if (arg.items[i].is(Kind::Object)) module.children.push_back(arg.items[i].object);
            if (i < arg.keys.size() && arg.keys[i].is(Kind::String)) module.attributes[arg.keys[i].text] = arg.items[i];
          }
      }
    } else if (layer.loss) {
      module.type = Object::Type::Loss;
      module.op = layer.op;
    } else {
      module.type = Object::Type::Layer;
      module.op = layer.op;
      module.composite = layer.composite;
      module.returnsPair = layer.returnsPair;
      if (!layer.hasParameters) module.parameters = DtypeSet();
      if (const Value* dtype = call.kw("dtype"); dtype && dtype->is(Kind::Dtype)) {
        module.parameters = dtype->dtype;
        module.parametersOrigin = noteAt(at, fmt::format("made with dtype={} here", dtype->dtype.toString()));
      }
    }
    return makeObject(std::move(module), state);
  }
  // torch.tensor(values, dtype=torch.float32), torch.as_tensor(...): the dtype asked for.
  if (isLibraryName(name, "torch.tensor") || isLibraryName(name, "torch.as_tensor")) {
    const Value* dtype = call.kw("dtype");
    if (dtype && dtype->is(Kind::Dtype))
      return Value::tensor(dtype->dtype, noteAt(at, fmt::format("made {} here", dtype->dtype.toString())));
    return Value::unknown();
  }
  // Tensor factories.
  if (name.rfind("torch.", 0) == 0 && factoryKind(last) != FactoryKind::NotFactory) {
    const Value* dtype = call.kw("dtype");
    if (dtype && dtype->is(Kind::Dtype))
      return Value::tensor(dtype->dtype, noteAt(at, fmt::format("made {} here", dtype->dtype.toString())));
    if (dtype) return Value::tensor(DtypeSet::unknown());
    switch (factoryKind(last)) {
    case FactoryKind::DefaultFloat: return Value::tensor(DtypeSet(ScalarType::Float));
    case FactoryKind::Long: return Value::tensor(DtypeSet(ScalarType::Int64));
    case FactoryKind::Like:
      if (!call.args.empty() && call.args[0].is(Kind::Tensor))
        return Value::tensor(call.args[0].dtype, call.args[0].origin);
      return Value::unknown();
    case FactoryKind::NotFactory: break;
    }
  }
  // Tensor ops by function: torch.matmul, torch.nn.functional.linear...
  if (isLibraryName(name, "torch." + last) || isLibraryName(name, "torch.nn.functional." + last)) {
    std::vector<Value> inputs = call.tensorArgs();
    // torch.cat([a, b]): the tensors it joins.
    if ((last == "cat" || last == "stack" || last == "concat") && !call.args.empty() && call.args[0].is(Kind::List) &&
        std::all_of(call.args[0].items.begin(), call.args[0].items.end(),
                    [](const Value& item) { return item.is(Kind::Tensor); }))
      inputs = call.args[0].items;
    if (inputs.empty()) return Value::unknown();
    const Value* out = call.kw("out");
    std::string op = last;
    if (out) op += "_out";
    const Value* dtype = call.kw("dtype");
    if (dtype && dtype->is(Kind::Dtype)) {
      tensorOp(op, inputs, call, state, frame, /*explicitDtype=*/true, out);
      return Value::tensor(dtype->dtype);
    }
    if (isMatmulFamily(last) || isPrecisionSensitive(last) || promotesOperands(last) || isLoss(last) || out ||
        onAnAutocastList(last))
      return tensorOp(op, inputs, call, state, frame, false, out);
    if (preservesDtype(last)) return dtypePreserved(last, inputs.front(), state);
    return Value::unknown();
  }
  // Library code the analysis does not see may drive the scalers handed to it.
  for (const Value& arg : call.args)
    if (arg.is(Kind::Object))
      if (auto it = state.heap.find(arg.object); it != state.heap.end() && it->second.type == Object::Type::Scaler)
        state.protocol.forgetScaler(arg.object);
  return Value::unknown();
}

Value Interpreter::callObjectMethod(ObjectId id, const std::string& method, Call& call, State& state, Frame& frame) {
  auto it = state.heap.find(id);
  if (it == state.heap.end()) return Value::unknown();
  Object& object = it->second;
  const SourceLocation at = call.node.location();
  auto ref = [&](ObjectId which) {
    auto o = state.heap.find(which);
    return ObjectRef{which, o == state.heap.end() ? "" : o->second.name};
  };
  auto optimizerArgument = [&]() -> std::optional<ObjectRef> {
    const Value* arg = call.arg(0, "optimizer");
    if (!arg || !arg->is(Kind::Object)) return std::nullopt;
    auto o = state.heap.find(arg->object);
    if (o == state.heap.end() || o->second.type != Object::Type::Optimizer) return std::nullopt;
    return ref(arg->object);
  };
  switch (object.type) {
  case Object::Type::Scaler: {
    const ObjectRef scaler = ref(id);
    if (method == "is_enabled") return object.enabled ? Value::boolean(*object.enabled) : Value::unknown();
    if (object.enabled == false) {
      // GradScaler(enabled=False): scale() hands the loss back, step() is the optimizer's.
      if (method == "scale") return call.args.empty() ? Value::unknown() : call.args[0];
      if (auto optimizer = method == "step" ? optimizerArgument() : std::nullopt) {
        state.protocol.optimizerStep(*optimizer, at, findings_);
        optimizerStepped(*optimizer, at, state, frame);
      }
      return Value::unknown();
    }
    if (method == "scale") {
      if (auto region = state.bfloat16Loss.scaled(state.autocast))
        state.protocol.scaledUnderBFloat16(scaler, at, *region);
      if (const Value* loss = call.arg(0, "outputs"); loss && loss->manual)
        state.manualScaling.scaledInsideScaler(*loss->manual, loss->factor, at, findings_);
      Value scaled = Value::objectRef(Kind::ScaledLoss, id);
      scaled.scaledAt = at;
      if (const Value* loss = call.arg(0, "outputs"); loss && loss->is(Kind::Tensor)) scaled.items = {*loss};
      return scaled;
    }
    if (method == "unscale_") {
      if (auto optimizer = optimizerArgument()) state.protocol.unscale(scaler, *optimizer, at, findings_);
      else state.protocol.unscaleUnidentifiedOptimizer(scaler, at, findings_);
      return Value::none();
    }
    if (method == "step") {
      if (auto optimizer = optimizerArgument()) {
        if (const ObjectId module = state.heap.at(optimizer->id).module; module && allFrozen(module, state)) {
          state.protocol.stepWithoutGradients(scaler, *optimizer, at, findings_, state.heap.at(module).frozenAt);
          placedAtCall_.insert(findings_.size() - 1);  // stepping a frozen optimizer is wrong where it is done
        }
        state.protocol.step(scaler, *optimizer, at, findings_, enclosingBranch(call.node));
        optimizerStepped(*optimizer, at, state, frame);
        state.protocol.optimizerSteppedByScaler(*optimizer, at);
      } else {
        state.protocol.stepUnidentifiedOptimizer(scaler, at, findings_);
      }
      return Value::unknown();
    }
    if (method == "update") {
      state.protocol.update(scaler, at, findings_, loopLevel_ ? std::optional(loopLevel_) : std::nullopt);
      return Value::none();
    }
    return Value::unknown();
  }
  case Object::Type::Optimizer:
    if (method == "step") {
      state.protocol.optimizerStep(ref(id), at, findings_);
      optimizerStepped(ref(id), at, state, frame);
    } else if (method == "zero_grad") state.protocol.zeroGrad(ref(id));
    return Value::unknown();
  case Object::Type::Settings:
    if (method == "save_for_backward") {
      Value saved = Value::make(Kind::List);
      saved.items = call.args;
      object.attributes["saved_tensors"] = saved;
      return Value::none();
    }
    return Value::unknown();
  case Object::Type::ConfigParser: {
    // cfg.read("train.ini"), cfg.read_file(open(path)): its sections.
    if ((method == "read" || method == "read_file") && !call.args.empty() &&
        (call.args[0].is(Kind::String) || call.args[0].is(Kind::File))) {
      object.file = call.args[0].text;
      const Value sections = loadIniFile(object.file, at.file);
      for (size_t i = 0; i < sections.keys.size(); ++i) object.attributes[sections.keys[i].text] = sections.items[i];
      // read() returns the files it could read: `if not cfg.read(path): raise` raises only on some runs.
      return method == "read" ? Value::unknown() : Value::none();
    }
    // cfg.getfloat("optim", "eps", fallback=1e-8): the setting "optim.eps in PATH".
    if (isIniGetter(method) && call.args.size() >= 2 && call.args[0].is(Kind::String) &&
        call.args[1].is(Kind::String)) {
      Value key = call.args[1];
      std::transform(key.text.begin(), key.text.end(), key.text.begin(), ::tolower);
      return iniConverted(method, configSetting(iniSection(object, call.args[0].text), key, call.node,
                                                call.args.size() > 2 ? &call.args[2] : call.kw("fallback")));
    }
    return Value::unknown();
  }
  case Object::Type::ArgumentParser: {
    if (method == "add_argument") {
      std::string dest;
      if (const Value* d = call.kw("dest"); d && d->is(Kind::String)) dest = d->text;
      for (const Value& arg : call.args)
        if (dest.empty() && arg.is(Kind::String) && arg.text.rfind("--", 0) == 0) dest = arg.text.substr(2);
      if (dest.empty() && !call.args.empty() && call.args[0].is(Kind::String) && call.args[0].text[0] != '-')
        dest = call.args[0].text;
      std::replace(dest.begin(), dest.end(), '-', '_');
      if (dest.empty()) return Value::unknown();
      Value value = Value::none();
      const Value* action = call.kw("action");
      if (const Value* given = call.kw("default")) value = *given;
      else if (action && action->is(Kind::String) && action->text == "store_true") value = Value::boolean(false);
      else if (action && action->is(Kind::String) && action->text == "store_false") value = Value::boolean(true);
      else if (call.kw("required")) value = Value::unknown();
      const Value* choices = call.kw("choices");
      std::string spelling = !call.args.empty() && call.args[0].is(Kind::String) ? call.args[0].text : dest;
      for (const Value& arg : call.args)
        if (arg.is(Kind::String) && arg.text.rfind("--", 0) == 0) {
          spelling = arg.text;
          break;
        }
      // type=Precision: the option is one of the enum's values, parsed into its member.
      const Value* type = call.kw("type");
      const ClassInfo* enumType =
          type && type->is(Kind::Class) && !type->cls->enumMembers.empty() ? type->cls : nullptr;
      std::vector<Value> named = choices && choices->is(Kind::List) ? choices->items : std::vector<Value>{};
      if (enumType) {
        auto valueOf = [&](const Value& v) { return isEnumMember(v) ? memberValue(v, state) : v; };
        value = valueOf(value);
        std::transform(named.begin(), named.end(), named.begin(), valueOf);
      }
      const Value given = readSetting(spelling, call.node, value, named);
      object.attributes[dest] = enumType ? enumByValue(*enumType, given, state) : given;
      return Value::unknown();
    }
    if (method == "set_defaults") {
      for (const auto& [name, value] : call.kwargs) object.attributes[name] = value;
      return Value::none();
    }
    if (method == "add_argument_group" || method == "add_mutually_exclusive_group")
      return Value::objectRef(Kind::Object, id);
    if (method == "parse_args" || method == "parse_known_args") {
      Object settings;
      settings.type = Object::Type::Settings;
      settings.typeName = "Namespace";
      settings.attributes = object.attributes;
      Value args = makeObject(std::move(settings), state);
      if (method == "parse_args") return args;
      Value pair = Value::make(Kind::List);
      pair.items = {args, Value::unknown()};
      return pair;
    }
    return Value::unknown();
  }
  default: break;
  }
  if (!object.isModule) return Value::unknown();
  // A module's own methods.
  if (method == "register_buffer" && call.args.size() >= 2 && call.args[0].is(Kind::String) &&
      call.args[1].is(Kind::Tensor)) {
    Value buffer = call.args[1];
    buffer.convertsWithModule = true;
    object.attributes[call.args[0].text] = buffer;
    return Value::none();
  }
  if (auto to = conversionMethod(method)) {
    convertModule(id, DtypeSet(*to), call.node, state);
    return Value::objectRef(Kind::Object, id);
  }
  if (method == "to" || method == "type") {
    for (const Value* arg :
         std::initializer_list<const Value*>{call.kw("dtype"), call.args.empty() ? nullptr : &call.args[0],
                                             call.args.size() > 1 ? &call.args[1] : nullptr})
      if (arg && arg->is(Kind::Dtype)) {
        convertModule(id, arg->dtype, call.node, state);
        break;
      }
    return Value::objectRef(Kind::Object, id);
  }
  if (method == "parameters") return Value::objectRef(Kind::Parameters, id);
  // model.state_dict(): its parameters by name (an EMA copied value by value).
  if (method == "state_dict" && call.args.empty()) {
    Value parameter = Value::tensor(parametersOf(id, state));
    parameter.parameterOf = id;
    Value dict = Value::make(Kind::Dict);
    dict.keys = {Value::unknown()};
    dict.items = {parameter};
    dict.itemsStandForMore = true;
    return dict;
  }
  if (method == "get_submodule") return someSubmodule(id, state);
  // model.modules() where every submodule is known: each in turn (a loop
  // converting the ones of a class, `if isinstance(m, Router): m.float()`),
  // the modules injected at run time too (merging LoRA adapters).
  if (method == "modules") {
    std::vector<Value> modules;
    std::set<ObjectId> seen;
    collectModules(id, state, modules, seen);
    if (modules.size() <= kModulesIteratedOneByOne) {
      Value list = Value::make(Kind::List);
      list.items = std::move(modules);
      return list;
    }
  }
  if (method == "modules" || method == "named_modules" || method == "children" || method == "named_children") {
    const Value element = someSubmodule(id, state);
    Value modules = Value::make(Kind::List);
    modules.itemsStandForMore = true;
    if (method.starts_with("named_")) {
      Value pair = Value::make(Kind::List);  // for name, module in model.named_modules()
      pair.items = {Value::unknown(), element};
      modules.items = {pair};
    } else {
      modules.items = {element};
    }
    return modules;
  }
  if (method == "add_module" && call.args.size() == 2) {
    if (!injectModule(id, call.args[0], call.args[1], state) && call.args[0].is(Kind::String))
      state.heap.at(id).attributes[call.args[0].text] = call.args[1];
    return Value::none();
  }
  if (method == "named_parameters") {
    Value named = Value::objectRef(Kind::Parameters, id);
    named.named = true;
    return named;
  }
  if (method == "requires_grad_") {
    const Value* wanted = call.arg(0, "requires_grad");
    setFrozen(id, wanted ? wanted->truth() == false : false, call.node, state);
    return Value::objectRef(Kind::Object, id);
  }
  // model.eval(), model.train(mode): `self.training` of it and of every submodule.
  if (method == "train" || method == "eval") {
    const Value* mode = method == "train" ? call.arg(0, "mode") : nullptr;
    const std::optional<bool> training = method == "eval" ? std::optional(false) : mode ? mode->truth() : true;
    std::vector<Value> modules;
    std::set<ObjectId> seen;
    collectModules(id, state, modules, seen);
    for (const Value& module : modules)
      state.heap.at(module.object).attributes["training"] = training ? Value::boolean(*training) : Value::unknown();
    return Value::objectRef(Kind::Object, id);
  }
  if (method == "cuda" || method == "cpu" || method == "apply" || method == "to_empty")
    return Value::objectRef(Kind::Object, id);
  if ((method == "register_forward_pre_hook" || method == "register_forward_hook") && !call.args.empty()) {
    Object& module = state.heap.at(id);
    (method == "register_forward_hook" ? module.postHooks : module.preHooks).push_back(call.args[0]);
    return Value::unknown();
  }
  if (method == "forward" || method == "__call__") return callModule(id, call, state, frame);
  return Value::unknown();
}

Value Interpreter::callModule(ObjectId id, Call& call, State& state, Frame& frame) {
  auto it = state.heap.find(id);
  if (it == state.heap.end()) return Value::unknown();
  std::vector<ObjectId> injected = std::exchange(it->second.injected, {});
  // The injected modules run somewhere inside, on the model's activations:
  // outside autocast, of its own parameters' dtype when that is one.
  DtypeSet activations = DtypeSet::unknown();
  if (!injected.empty() && state.autocast.cuda.enabled == Tristate::Off && state.autocast.cpu.enabled == Tristate::Off)
    if (const DtypeSet own = parametersOf(id, state); own.single()) activations = own;
  state.heap.at(id).injected = injected;
  // Its hooks (autocast switched on for its forward only): before and after it, with its inputs.
  const std::vector<Value> preHooks = state.heap.at(id).preHooks, postHooks = state.heap.at(id).postHooks;
  Value inputs = Value::make(Kind::List);
  inputs.items = call.args;
  auto runHook = [&](const Value& hook, std::vector<Value> args) {
    Call hookCall;
    hookCall.node = call.node;
    hookCall.args = std::move(args);
    return callValue(hook, hookCall, state, frame);
  };
  for (const Value& hook : preHooks) runHook(hook, {Value::objectRef(Kind::Object, id), inputs});
  Value result = callModuleItself(id, call, state, frame);
  for (const Value& hook : postHooks)
    if (Value replaced = runHook(hook, {Value::objectRef(Kind::Object, id), inputs, result}); replaced.is(Kind::Tensor))
      result = replaced;
  for (ObjectId module : injected) {
    Call inside;
    inside.node = call.node;
    inside.args = {Value::tensor(activations)};
    callModule(module, inside, state, frame);
  }
  return result;
}

Value Interpreter::callModuleItself(ObjectId id, Call& call, State& state, Frame& frame) {
  auto it = state.heap.find(id);
  if (it == state.heap.end()) return Value::unknown();
  const Object object = it->second;
  if (object.cls) {
    const FunctionInfo* forward = findMethod(*object.cls, object.isModule ? "forward" : "__call__");
    if (!forward) forward = findMethod(*object.cls, "__call__");
    return forward ? callFunction(*forward, Value::objectRef(Kind::Object, id), call, state, frame) : Value::unknown();
  }
  if (object.type == Object::Type::Pretrained) return libraryModelOutput(object, state);  // model(**batch)
  if (call.args.empty()) return Value::unknown();
  Value input = call.args[0];
  // A batch from a DataLoader, a library's result: a tensor of some dtype.
  if (input.is(Kind::Unknown)) input = Value::tensor(DtypeSet::unknown());
  if (!input.is(Kind::Tensor)) return Value::unknown();
  if (input.description.empty() && !call.argNodes.empty()) input.description = describe(call.argNodes[0]);
  switch (object.type) {
  case Object::Type::Container: {
    Value current = input;
    for (ObjectId child : object.children) {
      Call next = call;
      next.args = {current};
      current = callModule(child, next, state, frame);
      if (!current.is(Kind::Tensor)) return Value::unknown();
    }
    return current;
  }
  case Object::Type::Loss: {
    std::vector<Value> inputs{input};
    return tensorOp(object.op, inputs, call, state, frame);
  }
  case Object::Type::Pretrained: return libraryModelOutput(object, state);
  case Object::Type::Layer: {
    if (object.parameters.isBottom()) {  // ReLU, Dropout: no parameters
      Value v = input;
      v.description.clear();
      v.castInAutocast.reset();
      return v;
    }
    if (object.op.empty()) {
      // Outside autocast a composite layer computes in its parameters' dtype
      // (an input of another dtype raises inside it, in library code).
      const bool outsideAutocast =
          state.autocast.cuda.enabled == Tristate::Off && state.autocast.cpu.enabled == Tristate::Off;
      if (!object.composite || !outsideAutocast || !object.parameters.single() ||
          (input.is(Kind::Tensor) && !input.dtype.isUnknown() && input.dtype != object.parameters))
        return Value::unknown();
      Value output = Value::tensor(object.parameters, object.parametersOrigin);
      if (!object.returnsPair) return output;
      Value pair = Value::make(Kind::List);
      pair.items = {output, Value::unknown()};
      return pair;
    }
    OpEvent event;
    event.op = object.op;
    event.location = call.node.location();
    Operand x;
    x.description = "input " + input.description;
    x.dtype = input.dtype;
    x.origin = input.origin;
    x.castInAutocast = input.castInAutocast;
    Operand parameters;
    parameters.description = "the parameters of " + (object.name.empty() ? std::string("the module") : object.name);
    parameters.dtype = object.parameters;
    parameters.origin = object.parametersOrigin;
    if (!parameters.origin && object.parameters.single() == ScalarType::Float) parameters.origin.reset();
    event.inputs = {x, parameters};
    if (const auto& entry = frame.moduleEntry; entry && entry->sharedOrigin && *entry->sharedOrigin &&
                                               !frame.inCustomBackward && input.handedIntoModule == entry->number &&
                                               sameOrigin(*entry->sharedOrigin, object.parametersOrigin))
      event.operandsChosenByCall = frame.callChain.size() - entry->chainLength;
    if (emitOp(event, state, frame)) return Value::unknown();
    const Tristate casts = rules_.autocastCasts(object.op, state.autocast);
    // Autocast caches the low-precision copies of the trainable Float weights
    // it casts until clear_autocast_cache(), or until the outermost `with`
    // region ends.
    if ((state.autocastBySetter || state.autocastRegions > 0) && casts == Tristate::On &&
        object.parameters.contains(ScalarType::Float) && !object.frozen) {
      if (state.stepInRegion) {
        OptimizerStepEvent step = *std::exchange(state.stepInRegion, std::nullopt);
        step.staleCopyUsedAt = call.node.location();
        rules_.onOptimizerStep(step, findings_);
      }
      state.autocastCache = AutocastCacheState{call.node.location(), std::nullopt};
    }
    if (casts == Tristate::On) return Value::tensor(autocastResult(object.op, state.autocast));
    if (casts == Tristate::Off && isTableLookup(object.op)) return Value::tensor(object.parameters);
    // Outside autocast a matmul-family layer runs in its parameters' dtype
    // (any other input raises); a norm keeps its input's.
    if (casts == Tristate::Off && isMatmulFamily(object.op) && object.parameters.single())
      return Value::tensor(object.parameters);
    const bool normalizes = object.op.size() > 5 && object.op.compare(object.op.size() - 5, 5, "_norm") == 0;
    if (casts == Tristate::Off && (input.dtype == object.parameters || normalizes)) return Value::tensor(input.dtype);
    return Value::unknown();
  }
  default: return Value::unknown();
  }
}

}  // namespace dtype_lint::python
