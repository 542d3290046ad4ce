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
- torch.nn.Module._apply: where parameters became Half (DL202's note).
Every event is reported before the wrapped call runs, so a finding is written
even when PyTorch then raises. The wrapped calls behave exactly as before.
"""

import ctypes
import sys
import threading
import weakref

# Codes of dtype_lint_python_event (runtime_hooks/preload/preload.cpp).
_UNSCALE, _STEP, _UPDATE = 1, 2, 3
_OPTIMIZER_CREATED, _OPTIMIZER_STEP, _CLIP, _ZERO_GRAD, _PARAMETERS_HALF, _SCALER_CREATED = 10, 11, 12, 13, 14, 15
_OPTIMIZER_EPSILON = 16

_process = ctypes.CDLL(None)
_attached = False  # the adapter is in: torch's modules get their hooks
_event = _process.dtype_lint_python_event
_event.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
_event.restype = None
_scaled_loss = _process.dtype_lint_annotate_scaled_loss
_scaled_loss.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_scaled_loss.restype = None
_backward = None  # dtype_lint_adapter_backward, once the adapter is in
_backward_end = None  # dtype_lint_adapter_backward_end

_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/", "/lib/python3", "/runtime_hooks/python/")
_local = threading.local()  # inside_scaler_step: the optimizer step GradScaler.step makes is not a bypass
_half_origin = {}  # id(Parameter) -> (weakref to it, (qualified name, file, line)); tensors hash by identity
                   # but compare elementwise, so no WeakKeyDictionary
_optimizers = weakref.WeakSet()


def _user_frame():
    """(file, line) of the innermost frame outside torch, the standard library and these hooks."""
    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        if not file.startswith("<") and not any(m in file for m in _LIBRARY_MARKERS):
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
    entry = _half_origin.get(id(parameter))
    return entry[1] if entry and entry[0]() is parameter else None


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
            scaled = original(self, outputs, *args, **kwargs)
            if self.is_enabled() and hasattr(scaled, "_cdata"):
                _scaled_loss(id(self), scaled._cdata)
            return scaled
        return wrapper

    def unscale_(original):
        def wrapper(self, optimizer, *args, **kwargs):
            # step()'s own implicit unscale is part of the step it reported.
            if self.is_enabled() and not getattr(_local, "inside_scaler_step", False):
                _report_half_parameters(optimizer)
                _report(_UNSCALE, self, optimizer)
            return original(self, optimizer, *args, **kwargs)
        return wrapper

    def step(original):
        def wrapper(self, optimizer, *args, **kwargs):
            if not self.is_enabled():
                return original(self, optimizer, *args, **kwargs)
            _report_half_parameters(optimizer)
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
    names = {"torch.float16": "Half", "torch.bfloat16": "BFloat16", "torch.float32": "Float", "torch.float64": "Double"}
    for group in optimizer.param_groups:
        eps = group.get("eps")
        dtypes = {str(p.dtype) for p in group["params"]}
        if not isinstance(eps, float) or len(dtypes) != 1 or next(iter(dtypes)) not in names:
            continue
        detail = "%r %s %s" % (eps, names[next(iter(dtypes))], type(optimizer).__name__)
        _report(_OPTIMIZER_EPSILON, optimizer=optimizer, detail=detail,
                where=getattr(optimizer, "_dtype_lint_created_at", None))


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
    global _attached, _backward, _backward_end
    _attached = bool(_process.dtype_lint_python_torch_loaded())
    if _attached:
        _backward = _process.dtype_lint_adapter_backward
        _backward.argtypes = [ctypes.c_void_p]
        _backward.restype = None
        _backward_end = _process.dtype_lint_adapter_backward_end
        _backward_end.argtypes = []
        _backward_end.restype = None


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
                if p.dtype == torch.float16 and before.get(p) != torch.float16 and file:
                    _half_origin[id(p)] = (weakref.ref(p), (name, file, line))
            return result
        return wrapper

    _wrap(module_class, "_apply", apply)


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


sys.meta_path.insert(0, _HookingFinder())
