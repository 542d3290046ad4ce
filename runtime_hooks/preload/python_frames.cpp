// Python's C API, bound at run time: the preload links no Python, and a
// process without one never touches it. Only the stable API is used.
#include "python_frames.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "adapter_loader.h"

namespace dtype_lint::runtime {
namespace {

struct PythonApi {
  using Object = void*;
  int (*isInitialized)() = nullptr;
  int (*gilEnsure)() = nullptr;
  void (*gilRelease)(int) = nullptr;
  Object (*currentFrame)() = nullptr;  // PyEval_GetFrame: borrowed
  Object (*frameBack)(Object) = nullptr;  // PyFrame_GetBack: new reference
  Object (*frameCode)(Object) = nullptr;  // PyFrame_GetCode: new reference
  int (*frameLine)(Object) = nullptr;
  Object (*getAttr)(Object, const char*) = nullptr;
  const char* (*utf8)(Object) = nullptr;
  void (*decRef)(Object) = nullptr;

  bool complete() const {
    return isInitialized && gilEnsure && gilRelease && currentFrame && frameBack && frameCode && frameLine && getAttr &&
           utf8 && decRef;
  }
};

template <typename Fn>
void bind(Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

const PythonApi* python() {
  static const PythonApi* api = [] {
    static PythonApi a;
    bind(a.isInitialized, "Py_IsInitialized");
    bind(a.gilEnsure, "PyGILState_Ensure");
    bind(a.gilRelease, "PyGILState_Release");
    bind(a.currentFrame, "PyEval_GetFrame");
    bind(a.frameBack, "PyFrame_GetBack");
    bind(a.frameCode, "PyFrame_GetCode");
    bind(a.frameLine, "PyFrame_GetLineNumber");
    bind(a.getAttr, "PyObject_GetAttrString");
    bind(a.utf8, "PyUnicode_AsUTF8");
    bind(a.decRef, "Py_DecRef");
    return a.complete() ? &a : nullptr;
  }();
  return api && api->isInitialized() ? api : nullptr;
}

// Which files are the program's own code: set by the hooks once torch is
// imported (see dtype_lint_python_source_roots), from where the interpreter
// says its libraries are, not from how a path is spelled.
struct SourceRoots {
  std::mutex mutex;
  std::vector<std::string> user, library;  // directories, without a trailing '/'
  std::unordered_map<std::string, bool> verdicts;  // file -> the user's own
};

SourceRoots& sourceRoots() {
  static auto* roots = new SourceRoots;  // never destroyed: frames are read until the process ends
  return *roots;
}

bool isUnder(std::string_view file, std::string_view directory) {
  return file.size() > directory.size() && file.starts_with(directory) && file[directory.size()] == '/';
}

bool hasRepository(const std::string& directory) {
  struct stat info {};
  return stat((directory + "/.git").c_str(), &info) == 0;
}

// Under a user root, below no other repository (a submodule or a vendored
// clone is someone else's code), and not under any library root.
bool decideUserFile(const std::string& file, const SourceRoots& roots) {
  for (const std::string& library : roots.library)
    if (isUnder(file, library)) return false;
  if (roots.user.empty()) return true;  // the hooks have not said yet: nothing is known to be a library
  for (const std::string& root : roots.user) {
    if (!isUnder(file, root)) continue;
    for (size_t slash = file.rfind('/'); slash != std::string::npos && slash > root.size();
         slash = file.rfind('/', slash - 1))
      if (hasRepository(file.substr(0, slash))) return false;
    return true;
  }
  return false;
}

std::vector<std::string> linesOf(const char* text) {
  std::vector<std::string> out;
  std::string_view rest = text ? text : "";
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string line(rest.substr(0, end));
    while (line.size() > 1 && line.back() == '/') line.pop_back();
    if (!line.empty()) out.push_back(std::move(line));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  return out;
}

// Set once by the hooks; called with the GIL taken by ctypes. Returns the
// bytes written: "description\nfile\nline\nnote".
using TensorNamer = int (*)(const void* tensorImpl, char* buffer, int capacity);
std::atomic<TensorNamer> tensorNamer{nullptr};

}  // namespace

std::optional<PythonTensorName> namePythonTensor(const void* tensorImpl) {
  const TensorNamer namer = tensorNamer.load();
  if (!namer || !tensorImpl || !python()) return std::nullopt;
  char buffer[1024];
  const int length = namer(tensorImpl, buffer, sizeof buffer);
  if (length <= 0 || length > int(sizeof buffer)) return std::nullopt;
  std::vector<std::string> fields;
  std::string_view rest(buffer, size_t(length));
  for (int i = 0; i < 3; ++i) {
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    fields.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  PythonTensorName out{fields[0], std::nullopt};
  const unsigned line = unsigned(std::strtoul(fields[2].c_str(), nullptr, 10));
  if (!fields[1].empty() && line > 0) out.origin = Note{SourceLocation{fields[1], line, 0, line, 0}, std::string(rest)};
  return out;
}

bool isUserPythonFile(std::string_view file) {
  if (file.empty() || file.front() == '<') return false;  // <frozen importlib._bootstrap>, <string>
  if (file.front() != '/') return true;  // relative to the directory the program started in
  SourceRoots& roots = sourceRoots();
  std::lock_guard<std::mutex> lock(roots.mutex);
  std::string key(file);
  if (auto it = roots.verdicts.find(key); it != roots.verdicts.end()) return it->second;
  const bool user = decideUserFile(key, roots);
  roots.verdicts.emplace(std::move(key), user);
  return user;
}

// A frame of torch's dispatch machinery rather than of a library's own code:
// a torch function or dispatch mode passing the call on (set_default_device's
// DeviceContext wraps every call of the program in one).
bool isModeFrame(const PythonApi& py, void* code) {
  void* name = py.getAttr(code, "co_name");
  if (!name) return false;
  const char* text = py.utf8(name);
  const bool mode =
      text && (std::strcmp(text, "__torch_function__") == 0 || std::strcmp(text, "__torch_dispatch__") == 0);
  py.decRef(name);
  return mode;
}

std::optional<PythonFrame> userPythonFrame() {
  const PythonApi* py = python();
  if (!py) return std::nullopt;
  const int gil = py->gilEnsure();
  std::optional<PythonFrame> out;
  bool inLibrary = false;  // a frame inside the user's, other than a mode's
  void* frame = py->currentFrame();
  bool owned = false;  // the current frame is borrowed; each frame back is a new reference
  for (int depth = 0; frame && !out && depth < 256; ++depth) {
    if (void* code = py->frameCode(frame)) {
      if (void* name = py->getAttr(code, "co_filename")) {
        const char* file = py->utf8(name);
        if (file && isUserPythonFile(file)) {
          const unsigned line = unsigned(py->frameLine(frame));
          out = PythonFrame{SourceLocation{file, line, 0, line, 0}, inLibrary};
        } else if (!inLibrary && !isModeFrame(*py, code)) {
          inLibrary = true;
        }
        py->decRef(name);
      }
      py->decRef(code);
    }
    void* back = py->frameBack(frame);
    if (owned) py->decRef(frame);
    frame = back;
    owned = true;
  }
  if (owned && frame) py->decRef(frame);
  py->gilRelease(gil);
  return out;
}

void pythonStartsWithHooks() {
  // Not initialized yet: the interpreter reads PYTHONPATH after this constructor.
  if (!dlsym(RTLD_DEFAULT, "Py_Initialize")) return;
  const char* existing = std::getenv("PYTHONPATH");
  std::string path = dataDirectory() + "/runtime_hooks/python";
  if (existing && *existing) path += ":" + std::string(existing);
  setenv("DTYPE_LINT_PYTHONPATH", existing ? existing : "", 1);  // restored by the hooks for the script's view
  setenv("PYTHONPATH", path.c_str(), 1);
}

void notePythonRanWithoutHooks() {
  // The hooks' sitecustomize takes DTYPE_LINT_PYTHONPATH out of the environment when it runs.
  if (!dlsym(RTLD_DEFAULT, "Py_Initialize") || !std::getenv("DTYPE_LINT_PYTHONPATH") || !libTorchLoaded()) return;
  std::fprintf(stderr, "dtype-lint: note: this Python ignored PYTHONPATH (-E or -I), so the Python hooks never "
                       "started and nothing was checked; run it without -E/-I under dtype-lint\n");
}

}  // namespace dtype_lint::runtime

extern "C" __attribute__((visibility("default"))) void dtype_lint_python_source_roots(const char* user,
                                                                                      const char* library) {
  auto& roots = dtype_lint::runtime::sourceRoots();
  std::lock_guard<std::mutex> lock(roots.mutex);
  roots.user = dtype_lint::runtime::linesOf(user);
  roots.library = dtype_lint::runtime::linesOf(library);
  roots.verdicts.clear();
}

extern "C" __attribute__((visibility("default"))) void
dtype_lint_python_tensor_namer(int (*namer)(const void* tensorImpl, char* buffer, int capacity)) {
  dtype_lint::runtime::tensorNamer.store(namer);
}

extern "C" __attribute__((visibility("default"))) int dtype_lint_python_user_file(const char* file) {
  return file && dtype_lint::runtime::isUserPythonFile(file);
}
