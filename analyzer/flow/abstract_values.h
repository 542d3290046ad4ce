// The abstract values of the dtype flow: what the analysis knows of a tensor,
// a list, a struct, a module's parameters, and of the process (autocast, the
// scaler protocol) at one program point, and how paths join.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dtype_lint/dl203_manual_scaling.h"
#include "dtype_lint/dl209_scaler_with_bfloat16.h"
#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/events.h"
#include "dtype_lint/scaler_protocol.h"
#include "clang/AST/Decl.h"

namespace dtype_lint::analyzer::flow {

struct TensorFact {
  TensorFact(DtypeSet dtype = DtypeSet::unknown(), std::optional<Note> origin = std::nullopt, bool originNamed = false)
      : dtype(dtype), origin(std::move(origin)), originNamed(originNamed) {}

  DtypeSet dtype;
  std::optional<Note> origin;  // where the dtype was established ("became Half here")
  bool originNamed;  // the origin's message names the variable ("'x' became Half here")
  LossScalingFact scaling;  // the loss-scaling rules' (scaler_protocol.h)
  std::optional<ExplicitCast> castInAutocast;  // x.to(kHalf) while autocast is on (DL104)
  // The dtype constant written in a cast or a factory call that gave the
  // tensor its dtype (x.to(torch::kHalf)), where a fix can change it.
  std::optional<SourceLocation> dtypeConstant;
  bool asBuilt = false;  // a module's: the dtypes its constructor gave it (builtModule)

  friend bool operator==(const TensorFact& a, const TensorFact& b) {
    return a.dtype == b.dtype && a.scaling.sameAs(b.scaling) &&
           a.castInAutocast.has_value() == b.castInAutocast.has_value();
  }
};

TensorFact joinFacts(const TensorFact& a, const TensorFact& b);
// A module just built, of Float parameters: `origin` says where.
TensorFact builtModule(Note origin);
// Keeps the entries both paths agree on (known bools, bound objects by id).
template <typename Value, typename Same>
void keepAgreed(std::map<const clang::ValueDecl*, Value>& into, const std::map<const clang::ValueDecl*, Value>& other,
                Same same) {
  for (auto it = into.begin(); it != into.end();) {
    auto found = other.find(it->first);
    it = found == other.end() || !same(found->second, it->second) ? into.erase(it) : std::next(it);
  }
}
void joinBools(std::map<const clang::ValueDecl*, bool>& into, const std::map<const clang::ValueDecl*, bool>& other);
void joinObjects(std::map<const clang::ValueDecl*, ObjectRef>& into,
                 const std::map<const clang::ValueDecl*, ObjectRef>& other);

// What is known of a list of tensors (a std::vector<Tensor>, a map of
// tensors): its elements by position, or, once positions are lost (a list
// filled in a loop, a map), one fact that every element has.
struct ListFact {
  std::vector<TensorFact> elements;  // by position; when not positional, at most one: every element's
  bool positional = true;

  static ListFact unknown() { return {{}, false}; }
  // The fact of any element: the join over positions.
  TensorFact anyElement() const;
  // The element at a position known at analysis time; any element's otherwise.
  TensorFact at(std::optional<size_t> index) const;
  // push_back(t), emplace_back(t), m[key] = t: one more element.
  void add(const TensorFact& fact, bool atEnd);
  std::string key() const;

  friend bool operator==(const ListFact& a, const ListFact& b) {
    return a.positional == b.positional && a.elements == b.elements;
  }
};

ListFact joinLists(const ListFact& a, const ListFact& b);
// The tensor members of one struct value: cache.feats, ws.proj.
using FieldFacts = std::map<const clang::FieldDecl*, TensorFact>;
// Keeps the fields both know, joined.
FieldFacts joinFieldFacts(const FieldFacts& a, const FieldFacts& b);

// The value of an argument or parameter as far as the analysis follows it.
struct Value {
  enum class Kind { None, Tensor, Module, List, Object, Struct, Dtype, Bool } kind = Kind::None;
  TensorFact fact;  // tensors, the parameters of modules, a dtype or TensorOptions argument's dtype
  ListFact list;
  ObjectRef object;  // scalers and optimizers, by the caller's identity
  FieldFacts fields;  // the tensor members of a struct
  bool flag = false;  // a bool argument whose value is known (a guard's `enabled = true`)
};

// The part of the state that outlives a call: autocast and its cache, the
// scaler protocol, manual scaling. Callees start from the caller's and hand
// theirs back.
struct ProcessState {
  AutocastState autocast;
  AutocastCacheState autocastCache;  // DL107's (events.h)
  BFloat16LossSource bfloat16Loss;  // DL209's
  ScalerProtocol protocol;
  PendingManualScaling manualScaling;  // by the factor's variable
  // Inside a torch::NoGradGuard or InferenceMode scope on every path: the
  // custom Functions applied here build no graph, so their backward never runs.
  bool gradDisabled = false;

  void join(const ProcessState& other);
  bool sameAs(const ProcessState& o) const;
  std::string key() const;
};

struct FlowState {
  bool reached = false;
  std::map<const clang::ValueDecl*, TensorFact> tensors;
  std::map<const clang::ValueDecl*, TensorFact> modules;  // the dtype of each module's parameters
  std::map<const clang::ValueDecl*, ListFact> lists;
  std::map<const clang::ValueDecl*, FieldFacts> structs;  // local structs and struct parameters
  // Bools that hold a state the analysis knows: a guard's saved
  // `prev_enabled_ = at::autocast::is_cpu_enabled()`, restored on its way out.
  std::map<const clang::ValueDecl*, bool> bools;
  // Reference members bound to a scaler or optimizer (`GradScaler& scaler;`
  // given in an initializer list or a constructor): the object, by the
  // identity its owner tracks it under.
  std::map<const clang::ValueDecl*, ObjectRef> objects;
  // User module classes some module->to(dtype) converted: their registered
  // tensors no longer have the dtype their constructor gave them.
  std::set<const clang::CXXRecordDecl*> convertedModules;
  // Modules whose every parameter was frozen (requires_grad_(false)), and where.
  std::map<const clang::ValueDecl*, SourceLocation> frozenModules;
  ProcessState process;

  template <typename Map, typename Join>
  static void joinMap(Map& into, const Map& other, Join join) {
    for (auto it = into.begin(); it != into.end();) {
      auto found = other.find(it->first);
      if (found == other.end()) {
        it = into.erase(it);  // unknown on the other path
        continue;
      }
      it->second = join(it->second, found->second);
      ++it;
    }
  }

  void join(const FlowState& other);
  bool sameAs(const FlowState& o) const;
};

// What is known of the fields of user objects (a Trainer's model_, its
// tensors and lists, a module's submodules converted on their own): like the
// process state it outlives a call, so callees start from the caller's and
// hand theirs back. Converting a module forgets what is known of its
// registered members: they follow their parent's dtype again.
struct MemberFacts {
  std::map<const clang::ValueDecl*, TensorFact> tensors;
  std::map<const clang::ValueDecl*, TensorFact> modules;
  std::map<const clang::ValueDecl*, ListFact> lists;
  std::map<const clang::ValueDecl*, FieldFacts> structs;  // a Trainer's settings_ struct
  std::map<const clang::ValueDecl*, bool> bools;
  std::map<const clang::ValueDecl*, ObjectRef> objects;
  std::set<const clang::CXXRecordDecl*> convertedModules;

  // Whether a declaration's facts are member facts.
  static bool isMember(const clang::ValueDecl* d);
  static MemberFacts of(const FlowState& state);
  // Replaces the state's member facts with these.
  void replaceIn(FlowState& state) const;
  // Adds the facts of members the state knows nothing of.
  void addMissingTo(FlowState& state) const;
  void join(const MemberFacts& other);
  std::string key() const;
};

// A runtime flag's or setting's value on the paths one analysis follows (flag_paths.h).
struct FlagAssumption {
  const clang::ValueDecl* flag;
  bool value;  // a flag's; a setting's: whether it holds one of the values the program names
  bool isSetting = false;
  std::string setting;  // a setting's value, when it holds a named one
};

// The call into a user module from code outside one (`model->forward(x)` in
// a trainer), with where the dtypes it handed in were set. An op inside whose
// operands all kept them (a Half model given a Float input) raises because of
// that call: the mismatch is reported there.
struct ModuleEntry {
  size_t chainLength = 0;  // callChain's length inside the call; the call is its last entry then
  std::vector<SourceLocation> inputOrigins;
  std::optional<SourceLocation> moduleOrigin;  // the conversion of the module as a whole, if it had one
};

struct CallContext {
  std::vector<Value> args;
  std::optional<MemberFacts> members;  // the caller's; unset: members start from their class invariant
  // A lambda's: the state of the function it is called in (what it captures).
  std::shared_ptr<const FlowState> enclosing;
  ProcessState process;
  std::optional<TensorFact> thisModule;  // for member functions of modules
  // The module is the caller's parameter, of a dtype it does not know: it may
  // have been converted since it was built, its constructor's facts do not hold.
  bool thisModuleOfUnknownOrigin = false;
  std::optional<ObjectRef> thisObject;  // the caller's object of a member call
  // The class of *this when the caller knows it (a local trainer of a derived
  // class): virtual calls on this run that class's overrides.
  const clang::CXXRecordDecl* thisClass = nullptr;
  bool inCustomBackward = false;
  // Called by a scaler's own method under a test of its own state
  // (`if (!unscaled_) unscale_(opt)` in step()): an unscale here is skipped
  // when it was done already.
  bool guardedByScalerState = false;
  std::optional<Note> forwardUnderAutocast;
  ListFact savedVariables;  // what forward saved, for backward
  std::map<std::string, TensorFact> savedData;  // ctx->saved_data["key"] = tensor in forward
  std::vector<Note> callChain;
  const clang::FunctionDecl* caller = nullptr;  // the function callChain's first call is in
  std::optional<ModuleEntry> moduleEntry;
  int depth = 0;
  std::vector<FlagAssumption> assumptions;  // the same in every callee

  std::optional<bool> assumed(const clang::ValueDecl* flag) const;
  // A setting's assumed value: null when none is assumed.
  const FlagAssumption* assumedSetting(const clang::ValueDecl* setting) const;
  std::string assumptionsKey() const;
  std::string key(const clang::FunctionDecl* fn) const;
};

struct FunctionResult {
  TensorFact returned{DtypeSet(), std::nullopt};  // bottom until a return is seen
  ListFact savedForBackward;
  std::map<std::string, TensorFact> savedData;
  std::optional<FieldFacts> returnedFields;  // when a struct is returned
  std::optional<ListFact> returnedList;  // when a list of tensors is (a custom Function's outputs)
  std::optional<TensorFact> returnedOptimizer;  // an optimizer factory's: its parameters' dtype
  MemberFacts members;  // at exit
  // Modules the caller passed by reference (or through a holder) whose
  // parameters the function converted (`convert_module(*model, dtype)`): their
  // dtype at exit, by parameter index.
  std::map<unsigned, TensorFact> convertedModuleArgs;
  std::optional<FlowState> enclosingAtExit;  // a lambda's: its enclosing function's variables at exit
  bool exitReached = false;
  // No path returns, though the analysis followed them all: it throws (a
  // config parser refusing `--half-disc` without `--amp`) or exits.
  bool neverReturns = false;
  ProcessState exit;
};

}  // namespace dtype_lint::analyzer::flow
