// The Python front end's analysis: runs a program's files abstractly, in
// order, following dtypes, modules, autocast regions and scaler calls
// through functions, classes and the files they import, and hands the rule
// core the same events and protocol calls the C++ analyzer does.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint/finding.h"
#include "syntax.h"
#include "values.h"

namespace dtype_lint::python {

struct ModuleFile;

struct FunctionInfo {
  Node definition;  // function_definition
  std::vector<Node> decorators;
  ModuleFile* module = nullptr;
  const ClassInfo* owner = nullptr;  // a method's class
  std::string name;
  bool isGenerator = false;  // its body yields
};

struct ClassInfo {
  Node definition;
  ModuleFile* module = nullptr;
  std::string name;
  std::vector<Value> bases;
  std::map<std::string, const FunctionInfo*> methods;
  std::map<std::string, Node> attributes;  // class-level assignments and annotated fields' defaults
  std::vector<std::string> fields;  // a dataclass's, in order
  bool isDataclass = false;
  std::vector<std::string> enumMembers;  // an enum.Enum's, in order; empty for other classes
};

struct ModuleFile {
  std::unique_ptr<SourceFile> source;
  std::map<std::string, Value> globals;
  bool executed = false;
  std::vector<std::unique_ptr<FunctionInfo>> functions;
  std::vector<std::unique_ptr<ClassInfo>> classes;
  State finalState;  // after its top level ran: the objects its globals refer to
};

// A setting the program reads at run time (an argparse option, an
// environment variable) and the values the program itself names for it:
// argparse's choices, the literals it is compared with, the keys of a dict it
// looks up. The analysis runs once per value (python_analysis.cpp).
struct Setting {
  std::string spelling;  // --precision, $AMP_DTYPE
  SourceLocation at;  // where it is read
  std::vector<Value> values;  // the value read by default first
  std::string program;  // a file of the program that reads it (the file run, Interpreter::programs())
  bool decides = false;  // a test, comparison or lookup of it was reached
  bool choosesByLookup = false;  // looked up in a dict: it picks a dtype or a class
  bool choosesDtype = false;  // looked up in a dict of dtypes (PRECISIONS[args.precision])
  bool choicesClosed = false;  // argparse's choices: no other value is accepted
};

class Interpreter {
 public:
  // `configuration`: the value each setting (by spelling) has in this run; others have their defaults.
  explicit Interpreter(TorchVersion torch, std::map<std::string, Value> configuration = {})
      : rules_(torch), configuration_(std::move(configuration)) {}

  // Runs each file as a program (`__name__ == "__main__"`), then every
  // function and method no run reached, from unknown arguments.
  void run(const std::vector<std::string>& files);

  std::vector<Finding>& findings() { return findings_; }
  std::vector<Note>& toolNotes() { return toolNotes_; }
  size_t linesParsed() const { return lines_; }
  const std::vector<Setting>& settings() const { return settings_; }
  // The files run and imported, grouped into programs: files that import
  // each other, directly or through others, are one.
  std::vector<std::set<std::string>> programs() const;

 private:
  struct Frame;
  struct Call;

  ModuleFile* load(const std::string& path);
  // load(), then its top level run once (as an import: not `__main__`).
  ModuleFile* importFile(const std::string& path, const ModuleFile& importer);
  // A name an imported file defines, with the object it names brought into this state's heap.
  std::optional<Value> importedGlobal(const ModuleFile& module, const std::string& name, State& state);
  // The file an import names, relative to the importing file or above it; empty when none is there.
  std::string resolveImport(const std::string& importer, std::string_view dotted, int parentLevels) const;
  void executeModule(ModuleFile& module, bool asMain);

  // Statements.
  void execBlock(const Node& block, State& state, Frame& frame);
  // What iterating over a value gives, one element standing for all; unknown where not known.
  Value elementOf(const Value& iterable, const State& state) const;
  void exec(const Node& statement, State& state, Frame& frame);
  void execAssignment(const Node& assignment, State& state, Frame& frame);
  void assign(const Node& target, const Value& value, State& state, Frame& frame);
  void execIf(const Node& statement, State& state, Frame& frame);
  // On a branch of an `if` whose test was unknown, where `condition` holds or
  // fails: the protocol of the paths that test set apart at a join, and what
  // it tells of the name or attribute tested (None or not, truthy or not).
  void takeBranch(const Node& condition, bool holds, State& state, Frame& frame);
  // The setting an `x is None` (or `not x`) in `condition` tests, where x is
  // a setting left unset (an environment variable not exported); 0 if none.
  uint32_t unsetSettingTested(const Node& condition, State& state, Frame& frame);
  // The elements a loop's passes bind: a short known list's items one by one, else one element twice.
  std::vector<Value> loopPasses(const Value& iterable, const State& state) const;
  void execLoop(const Node& statement, State& state, Frame& frame);
  void execWith(const Node& statement, State& state, Frame& frame);
  void execTry(const Node& statement, State& state, Frame& frame);
  void execImport(const Node& statement, State& state, Frame& frame);
  void execImportOf(const Node& statement, State& state, Frame& frame);
  void adoptGlobalStores(State& state, const Frame& frame);
  void defineFunction(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame);
  Value functionValue(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame);
  void defineClass(const Node& definition, std::vector<Node> decorators, State& state, Frame& frame);

  // Expressions.
  Value eval(const Node& expression, State& state, Frame& frame);
  Value evalExpression(const Node& expression, State& state, Frame& frame);
  Value evalAttribute(const Node& expression, State& state, Frame& frame);
  // object.attribute, `expression` where it is read.
  Value attributeOf(const Value& object, const std::string& attribute, const Node& expression, State& state,
                    Frame& frame);
  Value evalCall(const Node& call, State& state, Frame& frame);
  // A call of what `callee` evaluated to: a function, class, module or library name.
  Value callValue(const Value& callee, Call& call, State& state, Frame& frame);
  Value evalBinary(const Node& expression, State& state, Frame& frame);
  Value evalComparison(const Node& expression, State& state, Frame& frame);
  Value evalSubscript(const Node& expression, State& state, Frame& frame);
  Value lookup(const std::string& name, State& state, Frame& frame);

  // Calls, by what is called.
  Value callLibrary(const std::string& name, Call& call, State& state, Frame& frame);
  Value callTensorMethod(const Value& self, const std::string& method, Call& call, State& state, Frame& frame);
  Value callObjectMethod(ObjectId id, const std::string& method, Call& call, State& state, Frame& frame);
  Value callModule(ObjectId id, Call& call, State& state, Frame& frame);
  Value callModuleItself(ObjectId id, Call& call, State& state, Frame& frame);
  Value callFunction(const FunctionInfo& function, std::optional<Value> self, Call& call, State& state, Frame& frame);
  Value instantiate(const ClassInfo& cls, Call& call, State& state, Frame& frame);
  Value applyCustomFunction(const ClassInfo& cls, Call& call, State& state, Frame& frame);
  const FunctionInfo* findMethod(const ClassInfo& cls, const std::string& name) const;
  bool derivesFrom(const ClassInfo& cls, std::string_view libraryBase) const;
  // Whether a class of the analyzed code derives from a torch.nn layer with parameters (nn.Linear).
  bool derivesFromLibraryLayer(const ClassInfo& cls) const;

  // An enum's member: one object per member, the same on every path.
  Value enumMember(const ClassInfo& cls, const std::string& name, State& state);
  // Enum(value): the member with that value (a setting's value chooses among them all).
  Value enumByValue(const ClassInfo& cls, const Value& value, State& state);
  // What iterating over a value gives: an enum's members for its class.
  Value iterated(const Value& iterable, State& state);
  bool isEnumMember(const Value& v) const;
  // An enum member's `value`.
  static const Value& memberValue(const Value& member, const State& state);

  // What the calls do.
  Value makeObject(Object object, State& state);
  Value tensorOp(const std::string& op, const std::vector<Value>& inputs, Call& call, State& state, Frame& frame,
                 bool explicitDtype = false, const Value* destination = nullptr);
  // Hands the op to the rules; whether it raises (nothing is known of its result then).
  bool emitOp(OpEvent event, State& state, Frame& frame);
  void optimizerStepped(const ObjectRef& optimizer, const SourceLocation& at, State& state, const Frame& frame);
  Value castTensor(const Value& tensor, DtypeSet to, const Node& at, State& state);
  Value dtypePreserved(const std::string& op, const Value& input, const State& state) const;
  void convertModule(ObjectId id, DtypeSet to, const Node& at, State& state);
  // The module's parameters may now have any dtype (adapters added, layers swapped).
  // `list`: the value listNode holds, where the caller has it already.
  bool growList(const Node& listNode, const Value* list, const std::string& method, const Value& item, State& state,
                Frame& frame);
  std::optional<Value> filteredDict(const Node& comprehension, State& state, Frame& frame);
  std::optional<Value> mappedDict(const Node& comprehension, State& state, Frame& frame);
  std::vector<Value> fieldChoices(const ClassInfo& cls, const std::string& field, State& state);
  void overwriteAttribute(ObjectId id, const Value& name, const Value& value, const Node& at, State& state);
  Value someSubmodule(ObjectId modelId, State& state);
  void collectModules(ObjectId id, const State& state, std::vector<Value>& out, std::set<ObjectId>& seen) const;
  std::optional<bool> isInstanceOfClass(const Value& value, const Value& types, const State& state) const;
  void storeItem(const Node& target, const Value& value, State& state, Frame& frame);
  Value* storage(const Node& expression, State& state, Frame& frame);
  std::optional<Value> callDictMethod(const Value& dict, const Node& dictNode, const std::string& method, Call& call,
                                      State& state, Frame& frame);
  void runUserDecorators(const std::vector<Node>& decorators, const Value& decorated, State& state, Frame& frame);
  void checkEpsilon(const Object& optimizer, DtypeSet parameters, const std::optional<Note>& origin);
  std::optional<Value> decoratorKeyword(const FunctionInfo& function, std::string_view decorator,
                                        std::string_view keyword, State& state);
  Value iniSection(const Object& parser, const std::string& name) const;
  bool injectModule(ObjectId parentId, const Value& name, const Value& module, State& state);
  void setFrozen(ObjectId module, bool frozen, const Node& at, State& state);
  bool allFrozen(ObjectId module, const State& state) const;
  void forgetParameters(ObjectId id, State& state);
  // Whether it moved the finding to the call (once: a caller further up leaves it there).
  // `calledFrom`: the helper, then every function it called.
  bool placeAtCall(Finding& finding, std::span<const FunctionInfo* const> calledFrom, const Node& callNode);
  std::vector<ObjectId> treeOf(ObjectId id, const State& state) const;
  // copy.deepcopy of a module: its submodules copied too.
  ObjectId deepCopy(ObjectId id, State& state, int depth = 0);
  DtypeSet parametersOf(ObjectId id, const State& state, std::optional<Note>* origin = nullptr) const;
  // Records the call into a user module from code outside one (Frame::ModuleEntry).
  void enterModule(ObjectId id, Frame& callee, const State& state);
  Value optimizerFor(const std::string& className, Call& call, State& state);
  Value libraryModelOutput(const Object& model, State& state);
  Value autocastRegion(const std::string& name, Call& call);
  void enterAutocast(const Value& region, const Node& at, State& state, AutocastState& saved);
  void leaveAutocast(const AutocastState& saved, State& state);
  static std::string describe(const Node& expression);

  // A setting's value read at `at` (its configured value, else `byDefault`), tagged with the setting.
  Value readSetting(const std::string& spelling, const Node& at, Value byDefault, const std::vector<Value>& named = {});
  // config["key"], config.get("key", byDefault) of a config file's dict: the setting `key`, by default the file's
  // value.
  Value configSetting(const Value& config, const Value& key, const Node& at, const Value* byDefault);
  // A value the program tests or compares (with `named`): where it is a setting's, the setting decides work.
  // The setting a value was read from, if any.
  Setting* settingOf(const Value& value);
  void settingUsed(const Value& value, const std::vector<Value>& named = {}, bool lookup = false);
  // A setting used as the key of a dict of dtypes: it chooses a precision (analyzed first).
  void dtypeChosenBy(const Value& key, const Value& dict);
  std::optional<bool> test(const Value& condition);

  DtypeFlowRules rules_;
  std::map<std::string, Value> configuration_;
  std::vector<Setting> settings_;
  const ModuleFile* root_ = nullptr;  // the file run as a program now
  std::vector<std::pair<const ModuleFile*, const ModuleFile*>> imports_;  // importer, imported
  std::map<std::string, std::unique_ptr<ModuleFile>> modules_;
  std::map<std::pair<const SourceFile*, uint32_t>, FunctionInfo*> functionsByNode_;
  std::map<std::pair<const SourceFile*, uint32_t>, ClassInfo*> classesByNode_;
  std::set<std::string> roots_;  // the inputs' directories: imports resolve under them
  std::set<const FunctionInfo*> analyzed_;
  std::vector<const FunctionInfo*> entered_;  // the calls of the outermost call under way, in order
  std::vector<const FunctionInfo*> callStack_;
  std::set<std::pair<const ModuleFile*, std::string>> globalStores_;  // module globals stored into by a function
  size_t injections_ = 0;  // modules injected into models so far (injectModule)
  // The loops around the statement run, across calls: a pass of each starts an iteration (DL210's).
  size_t loopLevel_ = 0;
  // The classes whose __init__ runs, innermost last, and where each was instantiated.
  std::vector<std::pair<std::string, SourceLocation>> constructing_;
  std::vector<Finding> findings_;
  uint32_t moduleCalls_ = 0;  // Frame::ModuleEntry's numbers
  std::set<size_t> placedAtCall_;  // findings_'s indices moved to a helper's call, or kept where they are
  std::vector<Note> toolNotes_;
  ObjectId nextObject_ = 1;
  std::map<std::pair<const ClassInfo*, std::string>, ObjectId> enumMembers_;
  size_t lines_ = 0;
  size_t steps_ = 0;  // statements run in the current root: a budget
  size_t evalDepth_ = 0;
  size_t blockDepth_ = 0;
};

}  // namespace dtype_lint::python
