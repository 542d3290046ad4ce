/* The boundary between the adapter (built against the traced process's own
 * LibTorch, with that build's C++ ABI: older PyPI wheels use
 * _GLIBCXX_USE_CXX11_ABI=0) and the preload core (built once, never linking
 * LibTorch). Only plain C records cross it: fixed-size fields, explicit
 * lengths, no C++ library types. The adapter states the version it was built
 * with when it attaches; the core refuses any other. */
#ifndef DTYPE_LINT_RUNTIME_BOUNDARY_H
#define DTYPE_LINT_RUNTIME_BOUNDARY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump on any change to a record or a function below. */
#define DTYPE_LINT_BOUNDARY_VERSION 10u

#define DTYPE_LINT_TEXT_CAPACITY 96u
#define DTYPE_LINT_MAX_OPERANDS 32u
#define DTYPE_LINT_MAX_DIMS 8u

/* Text, not NUL-terminated; longer text is cut at the capacity. */
typedef struct {
  uint32_t length;
  char bytes[DTYPE_LINT_TEXT_CAPACITY];
} dtype_lint_text;

/* Scalar types, as the rules know them. */
enum {
  DTYPE_LINT_DTYPE_UNKNOWN = -1,
  DTYPE_LINT_DTYPE_BOOL = 0,
  DTYPE_LINT_DTYPE_UINT8,
  DTYPE_LINT_DTYPE_INT8,
  DTYPE_LINT_DTYPE_INT16,
  DTYPE_LINT_DTYPE_INT32,
  DTYPE_LINT_DTYPE_INT64,
  DTYPE_LINT_DTYPE_HALF,
  DTYPE_LINT_DTYPE_BFLOAT16,
  DTYPE_LINT_DTYPE_FLOAT,
  DTYPE_LINT_DTYPE_DOUBLE,
};

typedef struct {
  dtype_lint_text description; /* "'self'", "'mat2'" */
  int32_t dtype; /* DTYPE_LINT_DTYPE_* */
  const void* tensor; /* its c10::TensorImpl: a Python front end names a module's parameter by it */
} dtype_lint_operand;

typedef struct {
  uint8_t enabled;
  int32_t dtype; /* the lower-precision type autocast casts to */
} dtype_lint_autocast;

/* One op about to run. */
typedef struct {
  dtype_lint_text op; /* ATen name: "mm", "mm_out", "mul_", "backward", ... */
  uint32_t input_count; /* at most DTYPE_LINT_MAX_OPERANDS */
  dtype_lint_operand inputs[DTYPE_LINT_MAX_OPERANDS];
  uint8_t has_destination; /* out= argument, or self of an in-place op */
  dtype_lint_operand destination;
  uint8_t explicit_dtype; /* a dtype= argument fixes the computation dtype */
  uint8_t reduces_all_dims; /* sum()/mean() with no dim */
  uint8_t in_custom_backward; /* run by the autograd engine inside a custom backward */
  dtype_lint_autocast autocast_cpu;
  dtype_lint_autocast autocast_cuda;
  double flops; /* a matmul-family op: 2 * multiply-adds, from its operands' shapes; else 0 */
  uint8_t autocast_elsewhere; /* autocast is on for a device none of the op's tensors is on */
} dtype_lint_op_record;

/* A tensor's values by what Half would make of them (kernels/' TensorStats). */
typedef struct {
  uint64_t elements, non_finite, beyond_half, half_subnormal, half_flushed, nonzero;
  float absmax;
} dtype_lint_value_counts;

/* A tensor to count: its values on the CPU (the core counts them), or the
 * counts the adapter made on the device (cpu_data NULL). */
typedef struct {
  int32_t dtype; /* DTYPE_LINT_DTYPE_HALF, _BFLOAT16, _FLOAT or _DOUBLE */
  int32_t dims; /* at most DTYPE_LINT_MAX_DIMS */
  int64_t sizes[DTYPE_LINT_MAX_DIMS];
  int64_t strides[DTYPE_LINT_MAX_DIMS]; /* in elements */
  const void* cpu_data;
  dtype_lint_value_counts counts;
} dtype_lint_tensor_values;

/* Where gradients are counted: a scaler's unscale (scaled gradients), or an
 * optimizer's first parameter update after a backward with no unscale. */
enum { DTYPE_LINT_POINT_UNSCALE = 0, DTYPE_LINT_POINT_STEP = 1 };
/* What the adapter asks the cadence about before it collects anything. */
enum { DTYPE_LINT_CHECK_GRADIENTS = 0, DTYPE_LINT_CHECK_HALF_CAST = 1 };

/* What a backward()'s loss graph says, for scalers on the raw AMP ops. */
enum { DTYPE_LINT_LOSS_SCALED = 0, DTYPE_LINT_LOSS_UNSCALED = 1, DTYPE_LINT_LOSS_UNKNOWN = 2 };

/* The adapter attaches once, at load, with DTYPE_LINT_BOUNDARY_VERSION and the
 * LibTorch version it was built against. Returns 1 when the core accepts it;
 * on 0 the adapter must not report anything. */
int dtype_lint_runtime_attach(uint32_t boundaryVersion, int32_t torchMajor, int32_t torchMinor);
/* `hook` runs first in every thread the program starts from now on, before
 * the thread's own code. 0 where it cannot (under ThreadSanitizer). */
int dtype_lint_runtime_on_thread_start(void (*hook)(void));
/* The adapter's callbacks run between these: a fork waits until no thread is
 * between them (see preload/fork_gate.h). Enter returns 0 when the hooks are
 * off for this process (a child forked while they were busy): the callback
 * must then return at once, without calling leave. */
int dtype_lint_runtime_enter(void);
void dtype_lint_runtime_leave(void);
/* One op about to run, on the calling thread; the core finds the user's
 * source line from the call stack when the op makes a finding. */
void dtype_lint_runtime_op(const dtype_lint_op_record* record);
/* backward() on the loss whose TensorImpl is `loss`; lossFactor: the constant
 * the user's code multiplied it by, 0 if it was not. */
void dtype_lint_runtime_backward(const void* loss, double lossFactor);
/* The user's code multiplied a tensor in place by a constant (div_(c) is 1/c). */
void dtype_lint_runtime_multiplied_in_place(double multiplier);
/* The user's code clipped gradients by hand since the last backward(): it
 * clamped them in place, or multiplied them in place (here) after taking
 * their norm. decidedAt (a dtype_lint_runtime_capture_site()) is where the
 * clip's size was decided: the norm, or the clamp. */
void dtype_lint_runtime_gradients_clipped(uint64_t decidedAt);
/* The user's code checked a tensor for inf/NaN. */
void dtype_lint_runtime_nonfinite_check(void);
/* The raw ATen AMP ops a C++ port of GradScaler calls. Unscale: the gradients
 * of one optimizer, known by the TensorImpl of its first gradient, of type
 * gradientDtype (DTYPE_LINT_DTYPE_*). Update: the scale was updated. */
void dtype_lint_runtime_amp_unscale(const void* firstGradient, int32_t gradientDtype);
void dtype_lint_runtime_amp_update(void);
/* The optimizer an unscale named by firstGradient stepped: one of its
 * parameters was updated in place since that unscale. */
void dtype_lint_runtime_amp_step(const void* firstGradient);
/* A backward() once the scale tensor is known: DTYPE_LINT_LOSS_*. */
void dtype_lint_runtime_amp_backward(int32_t loss);
/* The op whose record had flops > 0 returned: the GEMMs it ran are counted. */
void dtype_lint_runtime_gemm_done(void);
/* The calling thread's place in the user's code now, for an event reported
 * later (DL104's cast); 0 when there is none. */
uint64_t dtype_lint_runtime_capture_site(void);
/* An op under autocast got, as its input `input` (an index into op->inputs),
 * the result of a cast the program made while autocast was on (DL104): from
 * and to DTYPE_LINT_DTYPE_*, at the site captured then. */
void dtype_lint_runtime_cast_consumed(const dtype_lint_op_record* op, uint32_t input, int32_t castFrom, int32_t castTo,
                                      uint64_t castSite);
/* The prebuilt CUDA scan (kernels/, an image of every architecture the
 * driver loads with cuModuleLoadData), read once from beside the preload
 * library; 0 when there is none. The bytes stay valid for the process. */
int dtype_lint_runtime_scan_image(const void** image, uint64_t* size);
/* A tensor the rules wanted counted lives where this adapter cannot read it
 * ("meta", "mps", "cuda" without the adapter's CUDA path): said once at exit. */
void dtype_lint_runtime_uncounted(const dtype_lint_text* device);
/* 1 when the rules want this check point counted (DTYPE_LINT_CHECK_*). */
int dtype_lint_runtime_wants_values(int32_t check);
/* The gradients at a DTYPE_LINT_POINT_*; lossScale: the scaler's scale, 0 if unknown. site: where the
 * values were taken (dtype_lint_runtime_capture_site) when they are reported later (counts made on the
 * device arrive at a later check point, or at exit); 0: the calling thread's place now. */
void dtype_lint_runtime_gradients(int32_t point, const dtype_lint_tensor_values* gradients, uint32_t count,
                                  double lossScale, uint64_t site);
/* A cast to Half of `source`: by the op itself (op "to", "_to_copy"), or by
 * autocast for the op (byAutocast 1: "linear", "mm"); site as for the gradients. */
void dtype_lint_runtime_half_cast(const dtype_lint_text* op, const dtype_lint_text* source, uint8_t byAutocast,
                                  const dtype_lint_tensor_values* values, uint64_t site);

/* What the adapter exports for the Python hooks (runtime_hooks/python), which
 * find these by name in the process. Part of this boundary too: an adapter
 * cached by another version is never loaded. backward: Python's backward() on
 * the loss whose TensorImpl (Tensor._cdata) is given starts; backward_end: it
 * returned or raised. constant_factor: the constant the user's code multiplied
 * that tensor by to make it (`loss * 1024`), 0 if none. */
void dtype_lint_adapter_backward(void* tensorImpl);
void dtype_lint_adapter_backward_end(void);
double dtype_lint_adapter_constant_factor(void* tensorImpl);

/* What the preload core exports for the Python hooks, which call it through
 * ctypes. Their events, through dtype_lint_python_event; the first three are
 * dtype_lint/annotate.h's scaler events. The hooks read the codes from
 * dtype_lint_python_event_codes(), so they are written here only. */
#define DTYPE_LINT_PYTHON_EVENTS(X)                                                                                    \
  X(UNSCALE, 1)                                                                                                        \
  X(STEP, 2)                                                                                                           \
  X(UPDATE, 3)                                                                                                         \
  X(OPTIMIZER_CREATED, 10)                                                                                             \
  X(OPTIMIZER_STEP, 11)                                                                                                \
  X(CLIP, 12)                                                                                                          \
  X(ZERO_GRAD, 13)                                                                                                     \
  X(PARAMETERS_HALF, 14) /* detail: which parameters, and the note's text */                                           \
  X(SCALER_CREATED, 15)                                                                                                \
  X(UNSCALE_RAISED, 17) /* the unscale_() just reported raised: the gradients are still scaled */                      \
  X(STEP_WITHOUT_GRADIENTS, 18) /* before STEP: none of the optimizer's parameters has a gradient */
enum {
#define DTYPE_LINT_PYTHON_EVENT_CODE(NAME, CODE) DTYPE_LINT_PYTHON_##NAME = CODE,
  DTYPE_LINT_PYTHON_EVENTS(DTYPE_LINT_PYTHON_EVENT_CODE)
#undef DTYPE_LINT_PYTHON_EVENT_CODE
};
/* "UNSCALE=1 STEP=2 ...": every DTYPE_LINT_PYTHON_EVENTS code. */
const char* dtype_lint_python_event_codes(void);
/* scaler, optimizer: the objects' id()s (0: none); file and line: the user's
 * (NULL: unknown); detail: as the event says, or NULL. */
void dtype_lint_python_event(int event, uintptr_t scaler, uintptr_t optimizer, const char* file, int line,
                             const char* detail);
/* A parameter group at its optimizer's first step (DL304): its eps, the one
 * dtype of its parameters as the findings name dtypes ("Half"), and the
 * optimizer's class ("AdamW"); file and line: where the optimizer was made. */
void dtype_lint_python_optimizer_epsilon(double eps, const char* parameterDtype, const char* optimizerClass,
                                         const char* file, int line);

#ifdef __cplusplus
}
#endif

#endif
