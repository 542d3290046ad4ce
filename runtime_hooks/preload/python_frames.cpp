// Python's C API, bound at run time: the preload links no Python, and a
// process without one never touches it. Only the stable API is used.
#include "python_frames.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapter_loader.h"

namespace dtype_lint::runtime {
namespace {

struct PythonApi {
  using Object = void*;
  int (*isInitialized)() = nullptr;
  int (*gilEnsure)() = nullptr;
  void (*gilRelease)(int) = nullptr;
  Object (*currentFrame)() = nullptr;           // PyEval_GetFrame: borrowed
  Object (*frameBack)(Object) = nullptr;        // PyFrame_GetBack: new reference
  Object (*frameCode)(Object) = nullptr;        // PyFrame_GetCode: new reference
  int (*frameLine)(Object) = nullptr;
  Object (*getAttr)(Object, const char*) = nullptr;
  const char* (*utf8)(Object) = nullptr;
  void (*decRef)(Object) = nullptr;

  bool complete() const {
    return isInitialized && gilEnsure && gilRelease && currentFrame && frameBack && frameCode && frameLine &&
           getAttr && utf8 && decRef;
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

bool isLibraryFile(std::string_view file) {
  if (file.empty() || file.front() == '<') return true;  // <frozen importlib._bootstrap>, <string>
  for (std::string_view marker : {"/site-packages/", "/dist-packages/", "/lib/python3", "/runtime_hooks/python/"})
    if (file.find(marker) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::optional<SourceLocation> userPythonFrame() {
  const PythonApi* py = python();
  if (!py) return std::nullopt;
  const int gil = py->gilEnsure();
  std::optional<SourceLocation> out;
  void* frame = py->currentFrame();
  bool owned = false;  // the current frame is borrowed; each frame back is a new reference
  for (int depth = 0; frame && !out && depth < 256; ++depth) {
    if (void* code = py->frameCode(frame)) {
      if (void* name = py->getAttr(code, "co_filename")) {
        const char* file = py->utf8(name);
        if (file && !isLibraryFile(file)) {
          const unsigned line = unsigned(py->frameLine(frame));
          out = SourceLocation{file, line, 0, line, 0};
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
