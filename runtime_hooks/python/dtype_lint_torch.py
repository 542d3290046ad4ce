"""dtype-lint's hooks for the Python API of torch that no ATen op shows.

Imported at interpreter start by this directory's sitecustomize (the preload
library puts it first on PYTHONPATH). When `import torch` has loaded LibTorch
(torch._C), it asks the preload library to bind the adapter built against
that LibTorch; then it wraps, as their modules are imported:
- torch.amp.GradScaler (torch.cuda.amp.GradScaler derives from it):
  scale, unscale_, step, update: the scaler protocol, DL201-DL210;
- torch.optim.Optimizer: creation, step() (DL208 when the scaler is
  bypassed), zero_grad();
- torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (DL205);
- torch.autograd.backward (Tensor.backward calls it): a backward() whose
  loss the preload judges (DL106, DL203, DL207);
- torch.nn.Module.__init__ and _apply: where each module was made and where
  its parameters got their dtype (the notes of DL101 and DL202); DL101 names
  a module's parameters ('score.weight') through a namer the preload calls.
Every event is reported before the wrapped call runs, so a finding is written
even when PyTorch then raises. The wrapped calls behave exactly as before.
"""

import ctypes
import os
import sys
import threading
import weakref

_process = ctypes.CDLL(None)
_process.dtype_lint_python_event_codes.restype = ctypes.c_char_p
# The codes of dtype_lint_python_event, as runtime_hooks/include/dtype_lint_runtime/boundary.h defines them.
_CODES = {name: int(code) for name, code in
          (item.split("=") for item in _process.dtype_lint_python_event_codes().decode().split())}
_UNSCALE, _STEP, _UPDATE = _CODES["UNSCALE"], _CODES["STEP"], _CODES["UPDATE"]
_OPTIMIZER_CREATED, _OPTIMIZER_STEP = _CODES["OPTIMIZER_CREATED"], _CODES["OPTIMIZER_STEP"]
_CLIP, _ZERO_GRAD, _PARAMETERS_HALF = _CODES["CLIP"], _CODES["ZERO_GRAD"], _CODES["PARAMETERS_HALF"]
_SCALER_CREATED, _UNSCALE_RAISED = _CODES["SCALER_CREATED"], _CODES["UNSCALE_RAISED"]
_STEP_WITHOUT_GRADIENTS = _CODES["STEP_WITHOUT_GRADIENTS"]
_attached = False  # the adapter is in: torch's modules get their hooks
_event = _process.dtype_lint_python_event
_event.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
_event.restype = None
_scaled_loss = _process.dtype_lint_annotate_scaled_loss
_scaled_loss.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_scaled_loss.restype = None
_backward = None  # dtype_lint_adapter_backward, once the adapter is in
_backward_end = None  # dtype_lint_adapter_backward_end
_constant_factor = None  # dtype_lint_adapter_constant_factor
_optimizer_epsilon = _process.dtype_lint_python_optimizer_epsilon
_optimizer_epsilon.argtypes = [ctypes.c_double, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
_optimizer_epsilon.restype = None
_loss_factor = _process.dtype_lint_python_scaled_loss_factor
_loss_factor.argtypes = [ctypes.c_double, ctypes.c_char_p, ctypes.c_int]
_loss_factor.restype = None

_user_file = _process.dtype_lint_python_user_file  # the preload decides for its frames and ours alike
_user_file.argtypes = [ctypes.c_char_p]
_user_file.restype = ctypes.c_int
_local = threading.local()  # inside_scaler_step: the optimizer step GradScaler.step makes is not a bypass
_dtype_origin = {}  # id(Parameter) -> (weakref to it, its dtype, (qualified name, file, line)): where a
                    # module conversion gave it that dtype; tensors hash by identity but compare
                    # elementwise, so no WeakKeyDictionary
_made_at = weakref.WeakKeyDictionary()  # module -> (file, line) of the user's code that made it
_optimizers = weakref.WeakSet()
_DTYPE_NAMES = {"torch.float16": "Half", "torch.bfloat16": "BFloat16", "torch.float32": "Float",
                "torch.float64": "Double"}  # as the findings name dtypes


def _source_roots():
    """Where the program's own code is, and where the interpreter's libraries are (newline-separated).

    The program's code: the repository that holds the main script (its
    directory, outside any repository). Libraries: the interpreter's prefixes,
    site-packages and standard library, every sys.path entry that pip installed
    into (it holds *.dist-info), and these hooks. So a library found through
    PYTHONPATH, `pip install --target` or an editable install is a library
    wherever it lives, and a project is the user's wherever it lives."""
    import site
    import sysconfig
    main = sys.argv[0] if sys.argv and os.path.isfile(sys.argv[0]) else ""
    start = os.path.dirname(os.path.abspath(main)) if main else os.getcwd()
    user = start
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            user = directory
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    library = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, os.path.dirname(__file__)}
    library.update(path for path in sysconfig.get_paths().values())
    library.update(getattr(site, "getsitepackages", lambda: [])())
    library.add(getattr(site, "getusersitepackages", lambda: "")())
    for entry in sys.path:
        try:
            if entry and any(name.endswith((".dist-info", ".egg-info")) for name in os.listdir(entry)):
                library.add(entry)
        except OSError:
            pass
    # Both spellings: code objects name files as they were imported. A prefix
    # that holds the program itself (a script inside a virtualenv) is no library root.
    user = {user, os.path.realpath(user)}
    library = {form for path in library if path for form in (os.path.abspath(path), os.path.realpath(path))}
    library = {path for path in library if not any((root + "/").startswith(path + "/") for root in user)}
    return "\n".join(sorted(user)), "\n".join(sorted(library))


def _user_frame(outside_init_of=None):
    """(file, line) of the innermost frame of the program's own code (outside the __init__s of `outside_init_of`)."""
    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        in_init = outside_init_of is not None and frame.f_code.co_name == "__init__" and \
            frame.f_locals.get("self") is outside_init_of
        if not in_init and _user_file(file.encode()):
            return file, frame.f_lineno
        frame = frame.f_back
    return None, 0


def _report(code, scaler=None, optimizer=None, detail=None, where=None):
    file, line = where if where else _user_frame()
    _event(code, id(scaler) if scaler is not None else 0, id(optimizer) if optimizer is not None else 0,
           file.encode() if file else None, line, detail.encode() if detail else None)


def _optimizer_parameters(optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]


def _origin_of(parameter):
    entry = _dtype_origin.get(id(parameter))
    return entry[2] if entry and entry[0]() is parameter and entry[1] == parameter.dtype else None


def _report_half_parameters(optimizer):
    """Before an unscale: which parameters of `optimizer` are Half, and where they became Half."""
    import torch
    half = [p for p in _optimizer_parameters(optimizer) if p.dtype == torch.float16]
    if not half:
        return
    origins = [_origin_of(p) for p in half]
    known = [o for o in origins if o]
    names = [o[0] for o in known][:3] or ["%d parameter%s" % (len(half), "s" if len(half) > 1 else "")]
    more = len(half) - len(names) if known else 0
    listed = ", ".join("'%s'" % n for n in names) if known else names[0]
    if more > 0:
        listed += " and %d more" % more
    if known:
        where = (known[0][1], known[0][2])
        detail = "%s of the optimizer became Half here" % listed
    else:
        where = getattr(optimizer, "_dtype_lint_created_at", (None, 0))
        detail = "the optimizer made here holds %s already Half" % listed
    _report(_PARAMETERS_HALF, optimizer=optimizer, detail=detail, where=where)


def _wrap(owner, name, make):
    original = getattr(owner, name)
    if getattr(original, "_dtype_lint_wrapped", False):
        return
    wrapper = make(original)
    wrapper.__wrapped__ = original
    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__qualname__ = getattr(original, "__qualname__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper._dtype_lint_wrapped = True
    setattr(owner, name, wrapper)


def _hook_grad_scaler(module):
    scaler_class = module.GradScaler

    def init(original):
        def wrapper(self, *args, **kwargs):
            original(self, *args, **kwargs)
            if self.is_enabled():
                _report(_SCALER_CREATED, self)
        return wrapper

    def scale(original):
        def wrapper(self, outputs, *args, **kwargs):
            # scaler.scale(loss * 1024): scaled twice (DL203), the factor the adapter saw multiplied in.
            if self.is_enabled() and _constant_factor is not None and hasattr(outputs, "_cdata"):
                factor = _constant_factor(outputs._cdata)
                if factor:
                    file, line = _user_frame()
                    _loss_factor(factor, file.encode() if file else None, line)
            scaled = original(self, outputs, *args, **kwargs)
            if self.is_enabled() and hasattr(scaled, "_cdata"):
                _scaled_loss(id(self), scaled._cdata)
            return scaled
        return wrapper

    def unscale_(original):
        def wrapper(self, optimizer, *args, **kwargs):
            # step()'s own implicit unscale is part of the step it reported.
            if not self.is_enabled() or getattr(_local, "inside_scaler_step", False):
                return original(self, optimizer, *args, **kwargs)
            _report_half_parameters(optimizer)
            _report(_UNSCALE, self, optimizer)
            try:
                return original(self, optimizer, *args, **kwargs)
            except BaseException:
                # "Attempting to unscale FP16 gradients": nothing was unscaled, a retry is no second unscale.
                _report(_UNSCALE_RAISED, self, optimizer)
                raise
        return wrapper

    def step(original):
        def wrapper(self, optimizer, *args, **kwargs):
            if not self.is_enabled():
                return original(self, optimizer, *args, **kwargs)
            _report_half_parameters(optimizer)
            if all(p.grad is None for p in _optimizer_parameters(optimizer)):
                _report(_STEP_WITHOUT_GRADIENTS, self, optimizer)
            _report(_STEP, self, optimizer)
            _local.inside_scaler_step = True
            try:
                return original(self, optimizer, *args, **kwargs)
            finally:
                _local.inside_scaler_step = False
        return wrapper

    def update(original):
        def wrapper(self, *args, **kwargs):
            if self.is_enabled():
                _report(_UPDATE, self)
            return original(self, *args, **kwargs)
        return wrapper

    for name, make in (("__init__", init), ("scale", scale), ("unscale_", unscale_), ("step", step), ("update", update)):
        _wrap(scaler_class, name, make)


def _hook_optimizer(module):
    optimizer_class = module.Optimizer

    def init(original):
        def wrapper(self, *args, **kwargs):
            original(self, *args, **kwargs)
            self._dtype_lint_created_at = _user_frame()
            _optimizers.add(self)
            _report(_OPTIMIZER_CREATED, optimizer=self, where=self._dtype_lint_created_at)
        return wrapper

    def zero_grad(original):
        def wrapper(self, *args, **kwargs):
            _report(_ZERO_GRAD, optimizer=self)
            return original(self, *args, **kwargs)
        return wrapper

    _wrap(optimizer_class, "__init__", init)
    _wrap(optimizer_class, "zero_grad", zero_grad)

    # Subclasses define their own step(): a global pre-hook sees every one.
    def before_step(optimizer, args, kwargs):
        _report_epsilon(optimizer)
        if not getattr(_local, "inside_scaler_step", False):
            _report(_OPTIMIZER_STEP, optimizer=optimizer)

    module.register_optimizer_step_pre_hook(before_step)


def _report_epsilon(optimizer):
    """At an optimizer's first step: each parameter group's eps and its parameters' one dtype (DL304)."""
    if getattr(optimizer, "_dtype_lint_eps_checked", False):
        return
    optimizer._dtype_lint_eps_checked = True
    for group in optimizer.param_groups:
        eps = group.get("eps")
        dtypes = {str(p.dtype) for p in group["params"]}
        if not isinstance(eps, float) or len(dtypes) != 1 or next(iter(dtypes)) not in _DTYPE_NAMES:
            continue
        file, line = getattr(optimizer, "_dtype_lint_created_at", None) or _user_frame()
        _optimizer_epsilon(eps, _DTYPE_NAMES[next(iter(dtypes))].encode(), type(optimizer).__name__.encode(),
                           file.encode() if file else None, line)


def _optimizer_of(parameters):
    """The optimizer that holds the first of `parameters`, if one was seen."""
    import torch
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    if not parameters:
        return None, parameters
    first = parameters[0]
    for optimizer in list(_optimizers):
        if any(p is first for p in _optimizer_parameters(optimizer)):
            return optimizer, parameters
    return None, parameters


def _hook_clip_grad(module):
    def clip(original):
        def wrapper(parameters, *args, **kwargs):
            optimizer, parameters = _optimizer_of(parameters)
            _report(_CLIP, optimizer=optimizer)
            return original(parameters, *args, **kwargs)
        return wrapper

    for name in ("clip_grad_norm_", "clip_grad_value_"):
        if hasattr(module, name):
            _wrap(module, name, clip)


def _bind_adapter(module):
    """torch._C is loaded, and with it LibTorch: the preload binds the adapter for it."""
    global _attached, _backward, _backward_end, _constant_factor
    user, library = _source_roots()
    _process.dtype_lint_python_source_roots(user.encode(), library.encode())
    _attached = bool(_process.dtype_lint_python_torch_loaded())
    if _attached:
        _backward = _process.dtype_lint_adapter_backward
        _backward.argtypes = [ctypes.c_void_p]
        _backward.restype = None
        _backward_end = _process.dtype_lint_adapter_backward_end
        _backward_end.argtypes = []
        _backward_end.restype = None
        _constant_factor = _process.dtype_lint_adapter_constant_factor
        _constant_factor.argtypes = [ctypes.c_void_p]
        _constant_factor.restype = ctypes.c_double


def _hook_autograd(module):

    def backward(original):
        def wrapper(tensors, *args, **kwargs):
            if _backward is None or not hasattr(tensors, "_cdata"):
                return original(tensors, *args, **kwargs)
            _backward(tensors._cdata)
            try:
                return original(tensors, *args, **kwargs)
            finally:
                _backward_end()
        return wrapper

    _wrap(module, "backward", backward)


def _hook_module(module):
    module_class = module.Module

    def apply(original):
        def wrapper(self, *args, **kwargs):
            outermost = not getattr(_local, "in_apply", False)
            if not outermost:
                return original(self, *args, **kwargs)
            import torch
            before = {p: p.dtype for p in self.parameters()}
            _local.in_apply = True
            try:
                result = original(self, *args, **kwargs)
            finally:
                _local.in_apply = False
            file, line = _user_frame()
            for name, p in self.named_parameters():
                if p.dtype != before.get(p) and file:
                    _dtype_origin[id(p)] = (weakref.ref(p), p.dtype, (name, file, line))
            return result
        return wrapper

    def init(original):
        def wrapper(self, *args, **kwargs):
            original(self, *args, **kwargs)
            _made_at[self] = _user_frame(outside_init_of=self)
        return wrapper

    _wrap(module_class, "_apply", apply)
    _wrap(module_class, "__init__", init)
    _namer_keepalive.append(_TensorNamer(_name_tensor))
    _process.dtype_lint_python_tensor_namer(_namer_keepalive[-1])


_TensorNamer = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
_namer_keepalive = []  # ctypes frees a callback with its last reference


def _parameter_at(address):
    """(root module, qualified name of the parameter, its module, the parameter) whose TensorImpl is at `address`."""
    import gc
    import torch
    modules = [o for o in gc.get_objects() if issubclass(type(o), torch.nn.Module)]  # type(): no proxy answers
    children = {id(child) for m in modules for child in m._modules.values() if child is not None}
    for root in modules:
        if id(root) in children:
            continue
        for prefix, module in root.named_modules(remove_duplicate=False):
            for name, p in module._parameters.items():
                if p is not None and p._cdata == address:
                    return root, (prefix + "." if prefix else "") + name, module, p
    return None


def _name_tensor(address, buffer, capacity):
    """For the preload (namePythonTensor): "description\\nfile\\nline\\nnote" of a module's parameter."""
    try:
        found = _parameter_at(address)
        if found is None:
            return 0
        root, qualified, module, parameter = found
        kind = type(module).__name__
        dtype = _DTYPE_NAMES.get(str(parameter.dtype), str(parameter.dtype))
        owner = qualified.rpartition(".")[0] or type(root).__name__
        origin = _origin_of(parameter)
        if origin:
            file, line, note = origin[1], origin[2], "'%s' became %s here" % (qualified, dtype)
        else:
            file, line = _made_at.get(module, (None, 0))
            note = "'%s' (%s) was made here, with %s parameters" % (owner, kind, dtype)
        text = ("'%s'\n%s\n%d\n%s" % (qualified, file or "", line if file else 0, note)).encode()[:capacity]
        ctypes.memmove(buffer, text, len(text))
        return len(text)
    except Exception:  # never disturb the program: the finding keeps the argument's name
        return 0


_HOOKS = {
    "torch._C": _bind_adapter,
    "torch.amp.grad_scaler": _hook_grad_scaler,
    "torch.optim.optimizer": _hook_optimizer,
    "torch.nn.utils.clip_grad": _hook_clip_grad,
    "torch.autograd": _hook_autograd,
    "torch.nn.modules.module": _hook_module,
}


class _HookingLoader:
    """Runs a watched module's own loader, then hooks the module."""

    def __init__(self, loader, hook):
        self._loader = loader
        self._hook = hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        if not _attached and self._hook is not _bind_adapter:
            return  # no adapter (the preload said why): torch runs untouched
        try:
            self._hook(module)
        except Exception as error:  # never break the user's import
            sys.stderr.write("dtype-lint: warning: could not hook %s: %s\n" % (module.__name__, error))

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _HookingFinder:
    def find_spec(self, name, path=None, target=None):
        hook = _HOOKS.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _HookingLoader(spec.loader, hook)
                return spec
        return None


def _drop_hook_frames(error):
    """Takes the wrappers' frames out of an exception's traceback and of those it chains: the user never wrote them."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        entry = error.__traceback__
        while entry is not None:
            while entry.tb_next is not None and entry.tb_next.tb_frame.f_code.co_filename == __file__:
                entry.tb_next = entry.tb_next.tb_next
            entry = entry.tb_next
        error = error.__cause__ or error.__context__


def _hide_hook_frames():
    """Uncaught exceptions, of the main thread and of the others, are printed without the wrappers' frames."""
    print_uncaught, print_uncaught_in_thread = sys.excepthook, threading.excepthook

    def excepthook(kind, error, traceback):
        _drop_hook_frames(error)
        print_uncaught(kind, error, traceback)

    def thread_excepthook(args):
        _drop_hook_frames(args.exc_value)
        print_uncaught_in_thread(args)

    sys.excepthook, threading.excepthook = excepthook, thread_excepthook


_hide_hook_frames()
sys.meta_path.insert(0, _HookingFinder())
