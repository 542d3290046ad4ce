// The Python front end's abstract values and state: what a name holds (a
// tensor of some dtypes, a module, an optimizer, a scaler, a setting's
// constant), the objects those refer to, and the process state the rules
// follow (autocast, the scaler protocol). Paths that meet are joined: a fact
// survives only where both paths agree on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dtype_lint/dl209_scaler_with_bfloat16.h"
#include "dtype_lint/events.h"
#include "dtype_lint/scaler_protocol.h"
#include "syntax.h"

namespace dtype_lint::python {

using ObjectId = uintptr_t;
struct FunctionInfo;
struct ClassInfo;

struct Value {
  enum class Kind {
    Unknown,
    None,
    Bool,
    Number,
    String,
    File,  // open(path): the path in text
    Dtype,  // torch.float16
    Tensor,
    Name,  // a library name not modelled further: "torch.nn.functional.gelu"
    Object,  // a module, optimizer, scaler, settings object... (the heap's)
    Parameters,  // model.parameters()
    ScaledLoss,  // scaler.scale(loss)
    Autocast,  // torch.autocast(...), or contextlib.nullcontext() (enabled Off)
    Function,
    Class,
    Method,  // a user function bound to an object
    List,  // list or tuple
    Dict,
    Partial,  // functools.partial(f, *args, **kwargs): items {f, args (a List), kwargs (a Dict)[, the autocast region
              // it runs in]}
  } kind = Kind::Unknown;

  bool flag = false;  // Bool
  double number = 0;  // Number
  // String; Name: the dotted name; Autocast: the device type ("cuda", "cpu"; empty: unknown); File and a
  // config file's Dict: the path
  std::string text;
  DtypeSet dtype;  // Dtype; Tensor; Autocast: the dtype it casts to
  std::optional<Note> origin;  // Tensor: where it got its dtype
  std::optional<ExplicitCast> castInAutocast;  // Tensor: made by a cast under autocast
  std::optional<ManualScaling> manual;  // Tensor: a loss multiplied by a scale by hand (DL203)
  uintptr_t factor = 0;  // Tensor: that scale's variable, by its name's hash
  bool isGradient = false;  // Tensor: a parameter's .grad
  ObjectId parameterOf = 0;  // Tensor: a parameter of this module (for p in model.parameters())
  bool convertsWithModule = false;  // Tensor: an nn.Parameter or a registered buffer, which module.to(dtype) casts
  bool isParameter = false;  // Tensor: an nn.Parameter, one of its module's parameters
  uint32_t handedIntoModule = 0;  // Tensor: an input of the Interpreter's module call of this number, its dtype kept
  bool named = false;  // Parameters: named_parameters(), (name, parameter) pairs
  ObjectId object = 0;  // Object; Parameters (the module); ScaledLoss (the scaler); Method (self)
  std::optional<SourceLocation> scaledAt;  // ScaledLoss
  Tristate enabled = Tristate::On;  // Autocast
  const FunctionInfo* function = nullptr;  // Function, Method
  // Function: the enclosing function's variables when it was defined there (a closure: `deco` in `register(name)`)
  std::shared_ptr<const std::map<std::string, Value>> captured;
  const ClassInfo* cls = nullptr;  // Class
  std::vector<Value> items;  // List; Dict: the values
  bool itemsStandForMore = false;  // List: a few items for all (enumerate(), a comprehension, a long list)
  bool fromConfigFile = false;  // Dict: json/yaml.load(...): a key is a setting, its default the file's
  bool setByProgram = false;  // an item the program stored into a config file's Dict: read as it is, not as a setting
  std::vector<Value> keys;  // Dict
  std::string description;  // how a message names it: "'x'"
  uint32_t setting = 0;  // read from a setting chosen at run time: the Interpreter's settings()[setting - 1]
  // Unknown: what a branch taken on it tells (`if self.scale is not None:`,
  // `if self.use_amp:`), so that a later test of it goes the same way.
  std::optional<bool> knownTruth;
  bool knownNotNone = false;

  static Value unknown() { return {}; }
  static Value none() { return make(Kind::None); }
  static Value boolean(bool b) {
    Value v = make(Kind::Bool);
    v.flag = b;
    return v;
  }
  static Value numeric(double n) {
    Value v = make(Kind::Number);
    v.number = n;
    return v;
  }
  static Value string(std::string s) {
    Value v = make(Kind::String);
    v.text = std::move(s);
    return v;
  }
  static Value name(std::string dotted) {
    Value v = make(Kind::Name);
    v.text = std::move(dotted);
    return v;
  }
  static Value dtypeOf(DtypeSet d) {
    Value v = make(Kind::Dtype);
    v.dtype = d;
    return v;
  }
  static Value tensor(DtypeSet d, std::optional<Note> origin = std::nullopt) {
    Value v = make(Kind::Tensor);
    v.dtype = d;
    v.origin = std::move(origin);
    return v;
  }
  static Value ofClass(const ClassInfo* info) {
    Value v = make(Kind::Class);
    v.cls = info;
    return v;
  }
  static Value objectRef(Kind kind, ObjectId id) {
    Value v = make(kind);
    v.object = id;
    return v;
  }
  static Value make(Kind kind) {
    Value v;
    v.kind = kind;
    return v;
  }

  bool is(Kind k) const { return kind == k; }
  // A Bool, Number, String or None whose truth is known.
  std::optional<bool> truth() const;
  bool sameConstant(const Value& o) const;
};

Value joinValues(const Value& a, const Value& b);
// The module whose parameters a list gathered (decay.append(p) over
// model.named_parameters()); 0 when it holds anything else.
ObjectId gatheredParameters(const Value& list);

// What the analysis keeps of an object.
struct Object {
  enum class Type {
    Instance,  // of a class of the analyzed code
    Layer,  // torch.nn.Linear, Conv2d, Embedding, LayerNorm...: parameters of their own
    Container,  // torch.nn.Sequential, ModuleList, ModuleDict: the modules in `children`
    Pretrained,  // from_pretrained(): a library model with parameters of one dtype
    Loss,  // torch.nn.CrossEntropyLoss()...: a module with no parameters
    Optimizer,
    Scaler,
    ArgumentParser,  // argparse: the defaults of its arguments
    ConfigParser,  // configparser: the sections of the INI files it read, by name
    Settings,  // parse_args()'s namespace, a dataclass instance...: attributes only
    ModelOutput,  // a Hugging Face model's output: logits, last_hidden_state, sample
  } type = Type::Instance;
  const ClassInfo* cls = nullptr;
  std::string typeName;  // "Linear", "AdamW", the class's name
  std::string name;  // "'model'": how messages name it
  bool isModule = false;
  bool returnsTensor = false;  // Pretrained: a vision model (timm, torchvision) whose call returns its logits
  std::optional<bool> enabled;  // Scaler: its enabled= where known; made with enabled=False, it does nothing
  DtypeSet parameters = DtypeSet(ScalarType::Float);  // Layer, Pretrained
  bool frozen = false;  // Layer, Pretrained: requires_grad_(False) on its parameters, on every path
  std::optional<SourceLocation> frozenAt;
  std::optional<Note> parametersOrigin;
  std::map<std::string, Value> attributes;
  std::vector<ObjectId> children;  // Container
  // A module set into this model at run time (inject_lora: setattr(parent,
  // name, LoRALinear(child)) over named_modules()): part of its tree, its
  // forward run when the model's is.
  std::vector<ObjectId> injected;
  // register_forward_pre_hook / register_forward_hook: run around each call of the module.
  std::vector<Value> preHooks, postHooks;
  ObjectId submoduleOf = 0;  // a named_modules()/children() element: some submodule of this model
  ObjectId module = 0;  // Optimizer: the module whose parameters it updates
  std::optional<double> epsilon;  // Optimizer: its eps, where known
  std::optional<SourceLocation> epsilonGivenAt;  // Optimizer: its eps= argument
  SourceLocation createdAt;
  std::string file;  // ConfigParser: the INI file it read
  std::string op;  // Layer, Loss: the ATen op a call runs ("linear", "cross_entropy")
  // Layer: several ops (TransformerEncoder), in its parameters' dtype outside
  // autocast; returnsPair: (output, attention weights or hidden state).
  bool composite = false;
  bool returnsPair = false;
};

struct State {
  bool reached = true;
  std::map<std::string, Value> locals;
  std::map<ObjectId, Object> heap;
  AutocastState autocast;
  bool autocastBySetter = false;  // torch.set_autocast_enabled(True) ran: its cache is followed
  // Autocast regions (`with`, a decorated function) entered and not left: like
  // PyTorch's nesting count, leaving the outermost one clears the cache.
  int autocastRegions = 0;
  // A step inside such a region: its weights' cached copies are stale, which
  // matters (DL107) once a forward in the same region follows.
  std::optional<OptimizerStepEvent> stepInRegion;
  AutocastCacheState autocastCache;
  ScalerProtocol protocol;
  BFloat16LossSource bfloat16Loss;
  PendingManualScaling manualScaling;  // DL203's backward()s whose gradients may be divided back
  // The protocol of joined paths, set apart by a test a later `if` repeats:
  // a local or attribute that some paths left falsy or None (`pending = 0`
  // where an accumulation loop's last pass stepped, `self.scale` None where
  // the scaler stepped), while nothing changed the protocol since the join
  // (`joined`) or assigned it. Keyed by testKey().
  struct ProtocolSplit {
    std::optional<ScalerProtocol> whereHolds;  // truthy, or not None
    std::optional<ScalerProtocol> whereFails;  // falsy, or None
    ScalerProtocol joined;
  };
  std::map<std::string, ProtocolSplit> protocolSplits;

  void join(const State& other);
  // A change that does not depend on the path (leaving a loop, a loop's next
  // pass): to the protocol, and alike to the paths' protocols set apart.
  void changeProtocols(const std::function<void(ScalerProtocol&)>& change);
  // The protocol of the paths on which the test `key` holds or fails, where known apart.
  const ScalerProtocol* protocolWhere(const std::string& key, bool holds) const;
  // `if x:` tests truth, `if x is None:` None-ness; `holder` is "" for a local, else its object's id.
  static std::string testKey(bool ofNone, ObjectId holder, const std::string& name);
};

}  // namespace dtype_lint::python
