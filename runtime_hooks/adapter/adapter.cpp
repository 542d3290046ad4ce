// libdtype_lint_adapter.so: built against LibTorch, loaded by the preload
// core into a process that already has LibTorch, so it binds to that copy.
// Every op the program calls passes a dispatch key of its own, which is
// excluded while the op runs: the ops inside it are LibTorch's. Those some
// rule looks at are intercepted there with their inputs, before they run (a
// mismatched matmul is reported before it throws). A RecordFunction callback
// for autograd nodes alone tells the ops inside a node's backward.
#include <ATen/SequenceNumber.h>
#include <ATen/autocast_mode.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/library.h>
#include <torch/version.h>

#include "dtype_lint/op_contracts.h"
#include "dtype_lint_runtime/boundary.h"
#include "dtype_lint_runtime/hook_scope.h"

#ifdef DTYPE_LINT_ADAPTER_CUDA
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "cuda_scan.h"
#include "dtype_lint_runtime/tensor_view.h"
#endif

namespace dtype_lint::runtime {
namespace {

// What the op kernels keep per thread, together: the adapter is loaded with
// dlopen, so every thread_local costs a call to find (__tls_get_addr), and
// the kernels run on every op.
struct ThreadState {
  int backwardDepth = 0;  // inside an autograd node's backward
  // Inside a backward() Python announced: ops outside any node (the engine's
  // own reductions of broadcast gradients) are autograd's, not the user's.
  int pythonBackwardDepth = 0;
  bool gemmAnnounced = false;  // the running top-level op's record carried its FLOPs
  // This thread's dispatch keys (LibTorch's thread_local, found once): kInterceptKey is in them.
  c10::impl::PODLocalDispatchKeySet* dispatchKeys = nullptr;
};
thread_local ThreadState threadState;

// Tensor::backward() reaches the autograd engine without a dispatcher op; the
// one op it runs first is ones_like(loss) for the initial gradient. dladdr
// scans a library's symbols (LibTorch has hundreds of thousands), so what each
// return address is gets remembered: a training loop's backward() comes from
// the same few call sites every step.
bool calledFromBackward() {
  thread_local std::unordered_map<void*, bool> inBackwardFunction;
  void* frames[32];
  const int count = backtrace(frames, 32);
  if (inBackwardFunction.size() > 4096) inBackwardFunction.clear();
  for (int i = 0; i < count; ++i) {
    auto [known, added] = inBackwardFunction.try_emplace(frames[i], false);
    if (added) {
      Dl_info info{};
      known->second =
          dladdr(frames[i], &info) && info.dli_sname &&
          (std::strstr(info.dli_sname, "8autograd8backward") || std::strstr(info.dli_sname, "6Tensor9_backward"));
    }
    if (known->second) return true;
  }
  return false;
}

int32_t dtypeCode(c10::ScalarType t) {
  switch (t) {
  case c10::kBool: return DTYPE_LINT_DTYPE_BOOL;
  case c10::kByte: return DTYPE_LINT_DTYPE_UINT8;
  case c10::kChar: return DTYPE_LINT_DTYPE_INT8;
  case c10::kShort: return DTYPE_LINT_DTYPE_INT16;
  case c10::kInt: return DTYPE_LINT_DTYPE_INT32;
  case c10::kLong: return DTYPE_LINT_DTYPE_INT64;
  case c10::kHalf: return DTYPE_LINT_DTYPE_HALF;
  case c10::kBFloat16: return DTYPE_LINT_DTYPE_BFLOAT16;
  case c10::kFloat: return DTYPE_LINT_DTYPE_FLOAT;
  case c10::kDouble: return DTYPE_LINT_DTYPE_DOUBLE;
  default: return DTYPE_LINT_DTYPE_UNKNOWN;
  }
}

void setText(dtype_lint_text& text, std::string_view value) {
  text.length = static_cast<uint32_t>(std::min<size_t>(value.size(), DTYPE_LINT_TEXT_CAPACITY));
  std::memcpy(text.bytes, value.data(), text.length);
}

// `description`: the argument as findings name it, "'mat2'".
dtype_lint_operand operand(const at::Tensor& t, std::string_view description) {
  dtype_lint_operand o{};
  setText(o.description, description);
  o.dtype = dtypeCode(t.scalar_type());
  o.tensor = t.unsafeGetTensorImpl();
  return o;
}

// A record of `op` with no operands. Its 32 operand slots (4 KB) are left
// unwritten: the core reads input_count of them, and the destination only
// where there is one.
void startRecord(dtype_lint_op_record& record, std::string_view op) {
  std::memset(&record, 0, offsetof(dtype_lint_op_record, inputs));
  std::memset(&record.has_destination, 0, sizeof(record) - offsetof(dtype_lint_op_record, has_destination));
  setText(record.op, op);
}

void addInput(dtype_lint_op_record& record, const dtype_lint_operand& o) {
  if (record.input_count < DTYPE_LINT_MAX_OPERANDS) record.inputs[record.input_count++] = o;
}

// The ops clipping written by hand is made of, on gradients: their norm, an
// in-place product by a factor, an in-place clamp.
enum class HandClipStep { None, Norm, Rescale, Clamp };

// How a matmul-family op's FLOPs follow from its tensor operands' shapes,
// worked out once per operator.
enum class GemmShape { None, MatrixProduct, AddMatrixProduct, VectorProduct, AddVectorProduct, Linear, Matmul };

GemmShape gemmShapeOf(const std::string& gemm) {
  if (gemm == "mm" || gemm == "bmm") return GemmShape::MatrixProduct;
  if (gemm == "addmm" || gemm == "baddbmm" || gemm == "addbmm") return GemmShape::AddMatrixProduct;
  if (gemm == "mv" || gemm == "dot" || gemm == "vdot") return GemmShape::VectorProduct;
  if (gemm == "addmv") return GemmShape::AddVectorProduct;
  if (gemm == "linear") return GemmShape::Linear;
  if (gemm == "matmul") return GemmShape::Matmul;
  return GemmShape::None;
}

// What the hooks need to know of an operator, worked out once: most ops no
// rule looks at, and those must cost next to nothing.
struct OpInfo {
  std::string qualifiedName;  // "aten::mm": the identity a cached entry is checked against
  bool isOperator = false;  // a dispatcher op (not a RECORD_FUNCTION scope of a name)
  bool aten = false;
  std::string op;  // "mm", "mm_out", "mul_"
  bool matmul = false;  // the matmul family, out= variants included: all a backward node's ops are checked for
  GemmShape gemmShape = GemmShape::None;  // how its FLOPs follow from its operands' shapes
  bool inPlace = false;  // its first argument is the destination
  bool destinationOnly = false;  // in place, and its destination is no operand (copy_, a matmul's mm_)
  bool interesting = false;  // some rule or observer outside backward nodes looks at it: one of the below
  bool watched = false;  // watched(op)
  bool updatesInPlace = false;  // in place, or a _foreach_ in place: maybe an optimizer's parameter update
  bool nonFiniteCheck = false;  // isNonFiniteCheck(op)
  bool scalingArithmetic = false;  // mul, mul_, div_: a loss scaled, gradients scaled back by hand
  bool cast = false;  // to, _to_copy
  bool mul = false;  // mul: maybe a loss multiplied by the AMP scale
  bool onesLike = false;  // ones_like: maybe backward()'s first gradient
  HandClipStep clipStep = HandClipStep::None;  // what the op does if its tensors are gradients
  struct Argument {
    std::string description;  // "'mat2'"
    bool dtype = false, dim = false, out = false;
  };
  std::vector<Argument> arguments;
};

dtype_lint_autocast deviceAutocast(bool enabled, c10::ScalarType dtype) { return {enabled, dtypeCode(dtype)}; }

// A number the op multiplies by: a Scalar argument, or a C++ number wrapped
// into a tensor. Read without dispatching (we are inside the dispatcher).
std::optional<double> constantOperand(const c10::IValue& value) {
  if (value.isDouble()) return value.toDouble();
  if (value.isInt()) return static_cast<double>(value.toInt());
  if (!value.isTensor()) return std::nullopt;
  const at::Tensor& t = value.toTensor();
  if (!t.defined() || !t.unsafeGetTensorImpl()->is_wrapped_number()) return std::nullopt;
  if (t.scalar_type() == c10::kDouble) return *t.data_ptr<double>();
  if (t.scalar_type() == c10::kLong) return static_cast<double>(*t.data_ptr<int64_t>());
  return std::nullopt;
}

// The autograd nodes the user's last multiplications created, by sequence
// number, with a value: the constant multiplied by (a loss made by one of
// them carries its factor, DL203), or 1 for a multiplication by the AMP scale.
struct RecentProducts {
  std::array<std::pair<uint64_t, double>, 8> recent{};
  size_t next = 0;
  // The node the op about to run creates takes the next sequence number.
  void addNext(double value) { recent[next++ % recent.size()] = {at::sequence_number::peek(), value}; }
  double valueOf(uint64_t sequence) const {
    for (const auto& [s, value] : recent)
      if (s == sequence && value != 0) return value;
    return 0;
  }
  double valueOf(const at::Tensor& t) const {
    const auto& node = t.grad_fn();
    return node ? valueOf(node->sequence_nr()) : 0;
  }
};
thread_local RecentProducts constantProducts;
thread_local RecentProducts scaleProducts;

// The parameters backward()s on this thread reached (the AccumulateGrad
// leaves of their losses' graphs) that are still alive. Kept per thread: the
// hooks read their gradients, which only the thread training them may read
// (its zero_grad() frees them, from LibTorch 2.0 on).
class ReachedParameters {
 public:
  void add(const at::Tensor& parameter) {
    if (parameter.defined()) parameters_.try_emplace(parameter.unsafeGetTensorImpl(), parameter.getIntrusivePtr());
  }

  std::vector<at::Tensor> live() const {
    std::vector<at::Tensor> out;
    for (const auto& entry : parameters_)
      if (auto parameter = entry.second.lock()) out.emplace_back(std::move(parameter));
    return out;
  }

  // Leaves made every step (a fresh tensor with requires_grad) must not pile up.
  void forgetFreed() {
    if (parameters_.size() < 2 * afterLastSweep_ + 64) return;
    for (auto it = parameters_.begin(); it != parameters_.end();)
      it = it->second.expired() ? parameters_.erase(it) : std::next(it);
    afterLastSweep_ = parameters_.size();
  }

 private:
  std::unordered_map<const c10::TensorImpl*, c10::weak_intrusive_ptr<c10::TensorImpl>> parameters_;
  size_t afterLastSweep_ = 0;
};
thread_local ReachedParameters reachedParameters;

// Follows backward(loss)'s graph: the parameters it reaches join
// reachedParameters; returns what the graph says of the loss, a DTYPE_LINT_LOSS_*.
int32_t followBackward(const at::Tensor& loss) {
  bool scaled = false, multipliedByLargeNumber = false;
  std::vector<torch::autograd::Node*> pending;
  std::unordered_set<torch::autograd::Node*> seen;
  if (loss.grad_fn()) pending.push_back(loss.grad_fn().get());
  while (!pending.empty()) {
    torch::autograd::Node* node = pending.back();
    pending.pop_back();
    if (!seen.insert(node).second) continue;
    if (auto* leaf = dynamic_cast<torch::autograd::AccumulateGrad*>(node)) {
      reachedParameters.add(leaf->variable);
      continue;
    }
    scaled = scaled || scaleProducts.valueOf(node->sequence_nr()) != 0;
    multipliedByLargeNumber = multipliedByLargeNumber || constantProducts.valueOf(node->sequence_nr()) > 1;
    for (const auto& edge : node->next_edges())
      if (edge.function) pending.push_back(edge.function.get());
  }
  reachedParameters.forgetFreed();
  if (scaled) return DTYPE_LINT_LOSS_SCALED;
  return multipliedByLargeNumber ? DTYPE_LINT_LOSS_UNKNOWN : DTYPE_LINT_LOSS_UNSCALED;
}

// What the runtime follows of a scaler built on the raw AMP ops, which carry
// no optimizer and show no step(): the scale tensor (the one
// _amp_update_scale_ updates) and, from an unscale until the optimizer's step
// updates them, the optimizer each parameter's storage belongs to (LibTorch's
// optimizers update `p.data()`, another TensorImpl).
class AmpScalerTrace {
 public:
  bool isScale(const at::Tensor& t) const {
    return t.unsafeGetTensorImpl() == scaleImpl_.load(std::memory_order_relaxed);
  }
  bool scaleKnown() const { return scaleImpl_.load(std::memory_order_relaxed) != nullptr; }
  bool awaitingStep() const { return awaitingStep_.load(std::memory_order_relaxed); }

  void scaleUpdated(const at::Tensor& scale) {
    std::lock_guard<std::mutex> lock(mutex_);
    scale_ = scale;  // held, so the identity cannot be reused by another tensor
    scaleImpl_ = scale.unsafeGetTensorImpl();
    optimizerOfStorage_.clear();
    awaitingStep_ = false;
  }

  // An unscale of `gradients`: their parameters (among this thread's) await the optimizer's step.
  void unscaled(const std::vector<at::Tensor>& gradients, const void* optimizer) {
    std::unordered_set<const c10::TensorImpl*> listed;
    for (const at::Tensor& g : gradients)
      if (g.defined()) listed.insert(g.unsafeGetTensorImpl());
    std::vector<const c10::StorageImpl*> storages;
    for (const at::Tensor& parameter : reachedParameters.live()) {
      if (!parameter.has_storage()) continue;
      const at::Tensor& grad = parameter.grad();
      if (grad.defined() && listed.count(grad.unsafeGetTensorImpl()))
        storages.push_back(parameter.storage().unsafeGetStorageImpl());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (const c10::StorageImpl* storage : storages) optimizerOfStorage_[storage] = optimizer;
    awaitingStep_ = !optimizerOfStorage_.empty();
  }

  // An in-place op under no-grad on `self`: the optimizer whose step this is,
  // the first time one of its parameters is updated since its unscale.
  const void* stepOf(const c10::IValue& self) {
    std::lock_guard<std::mutex> lock(mutex_);
    const void* optimizer = nullptr;
    auto find = [&](const at::Tensor& t) {
      if (!optimizer && t.defined() && t.has_storage()) {
        auto it = optimizerOfStorage_.find(t.storage().unsafeGetStorageImpl());
        if (it != optimizerOfStorage_.end()) optimizer = it->second;
      }
    };
    if (self.isTensor()) find(self.toTensor());
    else if (self.isTensorList())
      for (const at::Tensor& t : self.toTensorList().vec()) find(t);
    if (!optimizer) return nullptr;
    for (auto it = optimizerOfStorage_.begin(); it != optimizerOfStorage_.end();)
      it = it->second == optimizer ? optimizerOfStorage_.erase(it) : std::next(it);
    awaitingStep_ = !optimizerOfStorage_.empty();
    return optimizer;
  }

 private:
  std::mutex mutex_;
  at::Tensor scale_;
  std::atomic<const c10::TensorImpl*> scaleImpl_{nullptr};
  std::unordered_map<const c10::StorageImpl*, const void*> optimizerOfStorage_;
  std::atomic<bool> awaitingStep_{false};
};

AmpScalerTrace& ampScaler() {
  static auto* trace = new AmpScalerTrace();  // never destroyed: ops run until exit, and it holds a tensor
  return *trace;
}

void sayUncounted(c10::DeviceType type);

// A tensor whose values the rules may count (DL301-DL303): strided Half,
// BFloat16, Float or Double, on the CPU (the core counts it) or, where this
// adapter has its CUDA path, on a GPU.
std::optional<dtype_lint_tensor_values> countable(const at::Tensor& t) {
  if (!t.defined() || t.layout() != c10::kStrided || !t.has_storage() || t.dim() > int64_t{DTYPE_LINT_MAX_DIMS})
    return std::nullopt;
  const c10::ScalarType type = t.scalar_type();
  if (type != c10::kHalf && type != c10::kBFloat16 && type != c10::kFloat && type != c10::kDouble) return std::nullopt;
  dtype_lint_tensor_values v{};
  v.dtype = dtypeCode(type);
  v.dims = static_cast<int32_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    v.sizes[d] = t.size(d);
    v.strides[d] = t.stride(d);
  }
  if (t.device().is_cpu()) {
    v.cpu_data = t.data_ptr();
    return v;
  }
#ifdef DTYPE_LINT_ADAPTER_CUDA
  if (t.device().is_cuda()) return v;
#endif
  sayUncounted(t.device().type());
  return std::nullopt;
}

// Tensors on `type` that the checks could not count: said once per device type, at exit.
void sayUncounted(c10::DeviceType type) {
  static std::mutex mutex;
  static std::unordered_set<int> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(static_cast<int>(type)).second) {
    dtype_lint_text device{};
    setText(device, c10::DeviceTypeName(type, /*lower_case=*/true));
    dtype_lint_runtime_uncounted(&device);
  }
}

// A check point whose values the core counts: gradients at a DTYPE_LINT_POINT_*,
// or a tensor cast to Half (by the op itself, or by autocast for the op).
struct CheckPoint {
  std::string key;  // "step", "unscale", "to", "linear 'input'": one launch in flight per key
  bool gradients = false;
  int32_t gradientPoint = DTYPE_LINT_POINT_STEP;
  double lossScale = 0;
  std::string op, source;
  bool byAutocast = false;
};

// Hands `values` of `point` to the core, at `site` (0: here).
void report(const CheckPoint& point, const std::vector<dtype_lint_tensor_values>& values, uint64_t site) {
  if (values.empty()) return;
  if (point.gradients) {
    dtype_lint_runtime_gradients(point.gradientPoint, values.data(), static_cast<uint32_t>(values.size()),
                                 point.lossScale, site);
    return;
  }
  dtype_lint_text opText{}, sourceText{};
  setText(opText, point.op);
  setText(sourceText, point.source);
  for (const dtype_lint_tensor_values& v : values)
    dtype_lint_runtime_half_cast(&opText, &sourceText, point.byAutocast, &v, site);
}

// Counts the host does not wait for: one launch, read once it has arrived.
class DeferredCounter {
 public:
  virtual ~DeferredCounter() = default;
  virtual bool launch(const std::vector<at::Tensor>& tensors, const std::vector<dtype_lint_tensor_values>& values) = 0;
  virtual bool arrived() = 0;  // never waits
  virtual bool wait() = 0;  // false when the counts cannot arrive any more
  virtual std::vector<dtype_lint_tensor_values> read() = 0;
};

// The CPU's stand-in for a device, for tests of what deferral must not lose
// (DTYPE_LINT_DEFER_CPU_COUNTS=1): the tensors are held, and the core counts
// them when they are read.
class HeldCpuCounter : public DeferredCounter {
 public:
  bool launch(const std::vector<at::Tensor>& tensors, const std::vector<dtype_lint_tensor_values>& values) override {
    tensors_ = tensors;
    values_ = values;
    return true;
  }
  bool arrived() override { return true; }
  bool wait() override { return true; }
  std::vector<dtype_lint_tensor_values> read() override { return values_; }  // their data held until the next launch

 private:
  std::vector<at::Tensor> tensors_;
  std::vector<dtype_lint_tensor_values> values_;
};

#ifdef DTYPE_LINT_ADAPTER_CUDA
// CUDA tensors, counted on the stream of the op that uses them by the
// prebuilt scan (cuda_scan.h).
class CudaCounter : public DeferredCounter {
 public:
  explicit CudaCounter(size_t capacity) : scan_(capacity) {}

  bool launch(const std::vector<at::Tensor>& tensors, const std::vector<dtype_lint_tensor_values>& values) override {
    std::vector<kernels::TensorView> views;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (auto view = kernelViewOf(values[i], tensors[i].data_ptr())) views.push_back(*view);
    if (views.size() != tensors.size()) return false;  // countable() gives only counted dtypes
    const c10::Device device = tensors[0].device();
    const c10::DeviceGuard onDevice(device);  // its context current on this thread
    void* stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle();
    if (!scan_.launch(views, stream)) {
      sayUncounted(c10::DeviceType::CUDA);
      return false;
    }
    values_ = values;
    return true;
  }
  bool arrived() override { return scan_.arrived(); }
  bool wait() override { return scan_.wait(); }
  std::vector<dtype_lint_tensor_values> read() override {
    const std::vector<kernels::TensorStats> stats = scan_.read(values_.size());
    std::vector<dtype_lint_tensor_values> out = values_;
    for (size_t i = 0; i < stats.size(); ++i)
      out[i].counts = {stats[i].elements,    stats[i].nonFinite, stats[i].beyondHalf, stats[i].halfSubnormal,
                       stats[i].halfFlushed, stats[i].nonZero,   stats[i].absMax};
    return out;
  }

 private:
  CudaScan scan_;  // never freed: counts may be in flight at exit
  std::vector<dtype_lint_tensor_values> values_;
};
#endif

// Deferred counts: a check point's counts are read at the next check point of
// the same kind once they have arrived (in a training loop, one iteration
// later), and those still in flight when the process exits are waited for
// then; each is reported at the site of its own check point.
class DeferredCounting {
 public:
  // Launches the counts of `tensors` (one device type; their values hold the
  // shapes) and reports those of the previous launch at `point` that arrived.
  void exchange(const CheckPoint& point, const std::vector<at::Tensor>& tensors,
                const std::vector<dtype_lint_tensor_values>& values) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[point.key + "@" + c10::DeviceTypeName(tensors.at(0).device().type())];
    if (slot.launched && slot.counter->arrived()) readInto(slot);
    if (slot.launched) return;  // the last launch is still on its way
    if (!slot.counter) slot.counter = counterFor(tensors[0].device(), point.gradients ? kMaxTensors : 1);
    const size_t count = std::min(tensors.size(), kMaxTensors);
    if (!slot.counter ||
        !slot.counter->launch({tensors.begin(), tensors.begin() + count}, {values.begin(), values.begin() + count}))
      return;
    slot.launched = true;
    slot.point = point;
    slot.site = dtype_lint_runtime_capture_site();
    slot.launchedBy = ::getpid();
    static std::once_flag flushAtExit;
    std::call_once(flushAtExit, [] { std::atexit([] { deferredCounting().flush(); }); });
  }

  // At exit: what is still in flight, waited for (a forked child's copy of
  // its parent's launches is not its own).
  void flush() {
    const HookScope scope;
    if (!scope) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, slot] : slots_)
      if (slot.launched && slot.launchedBy == ::getpid() && slot.counter->wait()) readInto(slot);
  }

  static DeferredCounting& deferredCounting() {
    static auto* counting = new DeferredCounting();  // never destroyed: flushed at exit
    return *counting;
  }

 private:
  static constexpr size_t kMaxTensors = 4096;
  struct Slot {
    std::unique_ptr<DeferredCounter> counter;
    bool launched = false;
    CheckPoint point;
    uint64_t site = 0;
    pid_t launchedBy = 0;
  };

  static std::unique_ptr<DeferredCounter> counterFor(c10::Device device, size_t capacity) {
#ifdef DTYPE_LINT_ADAPTER_CUDA
    if (device.is_cuda()) return std::make_unique<CudaCounter>(capacity);
#else
    (void)capacity;
#endif
    if (device.is_cpu()) return std::make_unique<HeldCpuCounter>();
    return nullptr;
  }

  static void readInto(Slot& slot) {
    slot.launched = false;
    report(slot.point, slot.counter->read(), slot.site);
  }

  std::mutex mutex_;
  std::unordered_map<std::string, Slot> slots_;
};

// Whether CPU tensors are counted as a device's are, for tests (see HeldCpuCounter).
bool deferCpuCounts() {
  static const bool defer = [] {
    const char* value = std::getenv("DTYPE_LINT_DEFER_CPU_COUNTS");
    return value && std::string_view(value) == "1";
  }();
  return defer;
}

// Counts the values of `tensors` at `point`: CPU ones at once, by the core;
// device ones deferred (DeferredCounting).
void countValuesAt(const CheckPoint& point, const std::vector<at::Tensor>& tensors) {
  std::vector<dtype_lint_tensor_values> now;
  std::map<c10::DeviceType, std::pair<std::vector<at::Tensor>, std::vector<dtype_lint_tensor_values>>> deferred;
  for (const at::Tensor& t : tensors) {
    const auto v = countable(t);
    if (!v) continue;
    if (v->cpu_data && !deferCpuCounts()) {
      now.push_back(*v);
    } else {
      auto& [held, values] = deferred[t.device().type()];
      held.push_back(t);
      values.push_back(*v);
    }
  }
  report(point, now, 0);
  for (const auto& [device, batch] : deferred)
    DeferredCounting::deferredCounting().exchange(point, batch.first, batch.second);
}

// Where gradients are counted: a scaler's unscale, or, after a backward with
// no unscale, the optimizer's first update of a parameter it reached.
struct GradientCheckPoints {
  std::unordered_set<const c10::StorageImpl*> parameterStorages;
  bool stepPending = false;  // a backward ran and neither point has counted its gradients
};
thread_local GradientCheckPoints gradientPoints;

void countGradients(int32_t point, const std::vector<at::Tensor>& gradients, double lossScale) {
  gradientPoints.stepPending = false;
  if (!dtype_lint_runtime_wants_values(DTYPE_LINT_CHECK_GRADIENTS)) return;
  CheckPoint at;
  at.key = point == DTYPE_LINT_POINT_UNSCALE ? "unscale" : "step";
  at.gradients = true;
  at.gradientPoint = point;
  at.lossScale = lossScale;
  countValuesAt(at, gradients);
}

// The scale a GradScaler divides by: 1 / inv_scale, when it is on the CPU
// (reading a GPU one would wait for the device).
double lossScaleOf(const c10::IValue& invScale) {
  if (!invScale.isTensor()) return 0;
  const at::Tensor& t = invScale.toTensor();
  if (!t.defined() || !t.device().is_cpu() || t.numel() != 1 || t.scalar_type() != c10::kFloat) return 0;
  const float inverse = *t.data_ptr<float>();
  return inverse > 0 ? 1.0 / inverse : 0;
}

// An in-place update under no-grad of a parameter the last backward reached:
// the optimizer's step applies the gradients now.
void observeOptimizerStep(const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs) {
  if (!info.updatesInPlace || !gradientPoints.stepPending || c10::GradMode::is_enabled() || inputs.empty()) return;
  auto isParameter = [](const at::Tensor& t) {
    return t.defined() && t.has_storage() && gradientPoints.parameterStorages.count(t.storage().unsafeGetStorageImpl());
  };
  bool updatesParameter = false;
  if (inputs[0].isTensor()) updatesParameter = isParameter(inputs[0].toTensor());
  else if (inputs[0].isTensorList())
    for (const at::Tensor& t : inputs[0].toTensorList().vec()) updatesParameter = updatesParameter || isParameter(t);
  if (!updatesParameter) return;
  std::vector<at::Tensor> gradients;
  for (const at::Tensor& parameter : reachedParameters.live())
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  countGradients(DTYPE_LINT_POINT_STEP, gradients, 0);
}

HandClipStep handClipStepOf(const std::string& op) {
  // A norm, or its first step when spelled out (`g.pow(2).sum()`).
  if (op == "norm" || op == "linalg_vector_norm" || op == "linalg_norm" || op == "frobenius_norm" ||
      op == "_foreach_norm" || op == "pow" || op == "square" || op == "_foreach_pow")
    return HandClipStep::Norm;
  if (op == "mul_" || op == "div_" || op == "_foreach_mul_" || op == "_foreach_div_") return HandClipStep::Rescale;
  if (op == "clamp_" || op == "clip_" || op == "clamp_min_" || op == "clamp_max_" || op == "_foreach_clamp_min_" ||
      op == "_foreach_clamp_max_")
    return HandClipStep::Clamp;
  return HandClipStep::None;
}

// Clipping written by hand (DL205 when the gradients are still scaled; the
// core knows whether they are): since the last backward, the gradients
// clamped in place, or their norm taken and then the gradients multiplied in
// place. Gradients are known by storage: `p.grad.detach()` and `.data` are
// other TensorImpls. Once per backward; a clip_grad_norm_ that Python
// announced is the core's to drop.
class HandClipTrace {
 public:
  void backwardStarted() {
    gradientsKnown_ = false;
    normSite_ = 0;
    reported_ = false;
  }

  void observe(HandClipStep step, c10::ArrayRef<const c10::IValue> inputs) {
    if (reported_ || inputs.empty() || (step == HandClipStep::Rescale && !normSite_)) return;
    if (!holdsGradient(inputs[0])) return;
    if (step == HandClipStep::Norm) {
      if (!normSite_) normSite_ = dtype_lint_runtime_capture_site();  // the first: a global norm takes one per tensor
      return;
    }
    reported_ = true;
    dtype_lint_runtime_gradients_clipped(step == HandClipStep::Rescale ? normSite_ : dtype_lint_runtime_capture_site());
  }

 private:
  bool holdsGradient(const c10::IValue& value) {
    if (!gradientsKnown_) {
      gradients_.clear();
      for (const at::Tensor& parameter : reachedParameters.live())
        if (const at::Tensor& grad = parameter.grad(); grad.defined() && grad.has_storage())
          gradients_.insert(grad.storage().unsafeGetStorageImpl());
      gradientsKnown_ = true;  // the gradients a backward made exist once it returned: the first op after it asks
    }
    auto isGradient = [this](const at::Tensor& t) {
      return t.defined() && t.has_storage() && gradients_.count(t.storage().unsafeGetStorageImpl());
    };
    if (value.isTensor()) return isGradient(value.toTensor());
    if (value.isTensorList())
      for (const at::Tensor& t : value.toTensorList().vec())
        if (isGradient(t)) return true;
    return false;
  }

  std::unordered_set<const c10::StorageImpl*> gradients_;
  bool gradientsKnown_ = false;
  uint64_t normSite_ = 0;  // where the gradients' norm was first taken, 0: not since the backward
  bool reported_ = false;
};
thread_local HandClipTrace handClips;

bool isCast(const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs) {
  return info.cast && !inputs.empty() && inputs[0].isTensor() && inputs[0].toTensor().defined();
}

// The dtype a cast (isCast) converts its tensor to: a dtype= argument, or
// to(other)'s dtype; none for a device-only to().
std::optional<c10::ScalarType> castTarget(const OpInfo& cast, c10::ArrayRef<const c10::IValue> inputs) {
  std::optional<c10::ScalarType> to;
  for (size_t i = 1; i < inputs.size() && i < cast.arguments.size(); ++i) {
    if (cast.arguments[i].dtype && inputs[i].isInt()) to = static_cast<c10::ScalarType>(inputs[i].toInt());
    else if (cast.arguments[i].description == "'other'" && inputs[i].isTensor())
      to = inputs[i].toTensor().scalar_type();
  }
  return to;
}

// The values of an op's argument (`source`, "'self'") cast to Half (DL302):
// by the op itself (`to`), or by autocast for the op.
void countHalfCast(const std::string& op, const std::string& argument, bool byAutocast, const at::Tensor& source) {
  CheckPoint at;
  at.key = byAutocast ? op + " " + argument : op;
  at.op = op;
  at.source = argument;
  at.byAutocast = byAutocast;
  countValuesAt(at, {source});
}

// A cast of a floating tensor to Half (DL302): the user's own `.to(kHalf)`.
void observeHalfCast(const std::string& op, const at::Tensor& source, c10::ScalarType to) {
  if (to != c10::kHalf || source.scalar_type() == c10::kHalf || !at::isFloatingType(source.scalar_type())) return;
  if (dtype_lint_runtime_wants_values(DTYPE_LINT_CHECK_HALF_CAST)) countHalfCast(op, "'self'", false, source);
}

// Autocast casts an op's Float operands to Half before a matmul (DL302).
void observeAutocastHalfCasts(const std::string& op,
                              c10::ArrayRef<std::pair<const at::Tensor*, const std::string*>> floatInputs) {
  if (floatInputs.empty() || !dtype_lint_runtime_wants_values(DTYPE_LINT_CHECK_HALF_CAST)) return;
  for (const auto& [tensor, argument] : floatInputs) countHalfCast(op, *argument, true, *tensor);
}

// Whether autocast is on for a device type (the per-device API of 2.4+; the
// older calls still exist there, but warn on every call).
bool autocastOn(c10::DeviceType device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return (device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA) &&
         at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                        : device == c10::DeviceType::CUDA && at::autocast::is_enabled();
#endif
}

// DL104 at runtime: the casts the program makes while autocast is on, and the
// tensors they return, known once the cast has run (see interceptOp).
struct ExplicitCastInAutocast {
  int32_t from = DTYPE_LINT_DTYPE_UNKNOWN, to = DTYPE_LINT_DTYPE_UNKNOWN;
  uint64_t site = 0;
};

struct CastResult {
  c10::weak_intrusive_ptr<c10::TensorImpl> tensor{c10::intrusive_ptr<c10::TensorImpl>()};
  const c10::TensorImpl* impl = nullptr;
  int32_t from = DTYPE_LINT_DTYPE_UNKNOWN, to = DTYPE_LINT_DTYPE_UNKNOWN;
  uint64_t site = 0;
};
thread_local std::array<CastResult, 8> recentCasts;  // the latest cast results, oldest overwritten
thread_local size_t nextCast = 0;
thread_local bool anyCast = false;

void rememberCastResult(const ExplicitCastInAutocast& cast, const c10::IValue& output) {
  if (!output.isTensor() || !output.toTensor().defined()) return;
  const at::Tensor& result = output.toTensor();
  CastResult& slot = recentCasts[nextCast++ % recentCasts.size()];
  slot.tensor = c10::weak_intrusive_ptr<c10::TensorImpl>(result.getIntrusivePtr());
  slot.impl = result.unsafeGetTensorImpl();
  slot.from = cast.from;
  slot.to = cast.to;
  slot.site = cast.site;
  anyCast = true;
}

// The program's own `x.to(dtype)` while autocast is on for x's device.
std::optional<ExplicitCastInAutocast> observeExplicitCast(const at::Tensor& source, std::optional<c10::ScalarType> to) {
  if (!at::isFloatingType(source.scalar_type()) || !autocastOn(source.device().type())) return std::nullopt;
  if (!to || !at::isFloatingType(*to)) return std::nullopt;
  return ExplicitCastInAutocast{dtypeCode(source.scalar_type()), dtypeCode(*to), dtype_lint_runtime_capture_site()};
}

// An op under autocast whose operand is such a cast's result (each result is
// reported once).
void observeCastConsumers(const dtype_lint_op_record& record,
                          c10::ArrayRef<std::pair<const c10::TensorImpl*, uint32_t>> inputIndex) {
  if (!anyCast || !(record.autocast_cpu.enabled || record.autocast_cuda.enabled)) return;
  for (const auto& [impl, index] : inputIndex)
    for (CastResult& cast : recentCasts) {
      if (cast.impl != impl || cast.tensor.lock().get() != impl) continue;
      dtype_lint_runtime_cast_consumed(&record, index, cast.from, cast.to, cast.site);
      cast = CastResult{};
    }
}

bool isNonFiniteCheck(const std::string& op) {
  return op == "isfinite" || op == "isinf" || op == "isnan" || op == "isposinf" || op == "isneginf" ||
         op == "_amp_foreach_non_finite_check_and_unscale_" || op == "_amp_update_scale_";
}

// The raw AMP ops a C++ port of GradScaler calls: the gradients of one
// optimizer unscaled (that optimizer known by its first gradient), the scale updated.
void observeAmpOps(const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs) {
  if (!info.nonFiniteCheck && !info.mul) return;  // the AMP ops are non-finite checks too
  const std::string& op = info.op;
  AmpScalerTrace& amp = ampScaler();
  if (op == "_amp_update_scale_") {
    if (!inputs.empty() && inputs[0].isTensor()) amp.scaleUpdated(inputs[0].toTensor());
    return dtype_lint_runtime_amp_update();
  }
  if (op == "mul" && inputs.size() >= 2 && amp.scaleKnown() && inputs[0].isTensor() && inputs[1].isTensor()) {
    const at::Tensor& a = inputs[0].toTensor();
    const at::Tensor& b = inputs[1].toTensor();
    if ((amp.isScale(a) && b.requires_grad()) || (amp.isScale(b) && a.requires_grad())) scaleProducts.addNext(1);
    return;
  }
  if (op != "_amp_foreach_non_finite_check_and_unscale_" || inputs.empty() || !inputs[0].isTensorList()) return;
  const auto gradients = inputs[0].toTensorList().vec();
  if (gradients.empty() || !gradients[0].defined()) return;
  const at::Tensor& first = gradients[0];
  // Counted before the op unscales them: the values the backward made.
  countGradients(DTYPE_LINT_POINT_UNSCALE, gradients, inputs.size() > 2 ? lossScaleOf(inputs[2]) : 0);
  amp.unscaled(gradients, first.unsafeGetTensorImpl());
  dtype_lint_runtime_amp_unscale(first.unsafeGetTensorImpl(), dtypeCode(first.scalar_type()));
}

// An optimizer's step shows as in-place updates of its parameters under
// no-grad (`p.add_`, `p.addcdiv_`, `_foreach_add_(params, ...)`).
void observeParameterUpdates(const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs) {
  if (!info.updatesInPlace || !ampScaler().awaitingStep() || c10::GradMode::is_enabled() || inputs.empty()) return;
  if (const void* optimizer = ampScaler().stepOf(inputs[0])) dtype_lint_runtime_amp_step(optimizer);
}

// The ops a hand-rolled loss scaling leaves behind (DL203): the loss
// multiplied by a constant, gradients multiplied or divided back in place,
// and inf/NaN checks.
void observeScalingOps(const OpInfo& info, c10::ArrayRef<const c10::IValue> inputs) {
  if (info.nonFiniteCheck) return dtype_lint_runtime_nonfinite_check();
  if (!info.scalingArithmetic || inputs.size() < 2) return;
  const std::string& op = info.op;
  const auto constant = constantOperand(inputs[1]);
  if (!constant || *constant == 0) return;
  if (op == "mul") {
    // The node this op is about to create takes the next sequence number.
    if (inputs[0].isTensor() && inputs[0].toTensor().requires_grad()) constantProducts.addNext(*constant);
  } else {
    dtype_lint_runtime_multiplied_in_place(op == "mul_" ? *constant : 1.0 / *constant);
  }
}

// 2 * multiply-adds of a matmul-family op, from its tensor operands' shapes
// (DL305); 0 for the ones it does not count (convolutions, einsum).
double matmulFlops(GemmShape shape, c10::ArrayRef<const at::Tensor*> t) {
  auto numel = [](const at::Tensor& x) { return static_cast<double>(x.numel()); };
  auto lastDim = [](const at::Tensor& x) { return x.dim() > 0 ? static_cast<double>(x.size(-1)) : 1.0; };
  switch (shape) {
  case GemmShape::MatrixProduct: return t.size() >= 2 ? 2 * numel(*t[0]) * lastDim(*t[1]) : 0;
  case GemmShape::AddMatrixProduct: return t.size() >= 3 ? 2 * numel(*t[1]) * lastDim(*t[2]) : 0;
  case GemmShape::VectorProduct: return !t.empty() ? 2 * numel(*t[0]) : 0;
  case GemmShape::AddVectorProduct: return t.size() >= 2 ? 2 * numel(*t[1]) : 0;
  case GemmShape::Linear:
    return t.size() >= 2 && t[1]->dim() == 2 ? 2 * numel(*t[0]) * static_cast<double>(t[1]->size(0)) : 0;
  case GemmShape::Matmul: {
    if (t.size() < 2 || t[0]->dim() == 0 || t[1]->dim() == 0) return 0;
    const double k = lastDim(*t[0]);
    const double columns = t[1]->dim() >= 2 ? lastDim(*t[1]) : 1;
    const double rows = std::max(numel(*t[0]) / std::max(k, 1.0), 1.0);
    const double batchOfB = t[1]->dim() > 2 && t[0]->dim() <= 2 ? numel(*t[1]) / std::max(k * columns, 1.0) : 1;
    return 2 * rows * k * columns * batchOfB;
  }
  case GemmShape::None: return 0;
  }
  return 0;
}

// The ops some runtime rule looks at.
bool watched(const std::string& op) {
  if (op == "backward") return true;
  if (auto base = outVariantBase(op)) return isMatmulFamily(*base) || computesInInputDtype(*base);
  if (auto base = inPlaceBase(op)) return true;
  return isMatmulFamily(op) || isPrecisionSensitive(op);
}

OpInfo describe(const c10::OperatorName& name) {
  OpInfo info;
  info.qualifiedName = name.name;
  info.isOperator = true;
  info.aten = name.name.rfind("aten::", 0) == 0;
  if (!info.aten) return info;
  info.op = name.name.substr(6);
  if (name.overload_name == "out") info.op += "_out";
  const std::string& op = info.op;
  const std::string gemm(outVariantBase(op).value_or(op));
  info.matmul = isMatmulFamily(gemm);
  info.gemmShape = gemmShapeOf(gemm);
  if (const auto base = inPlaceBase(op)) {
    info.inPlace = true;
    info.destinationOnly = isMatmulFamily(*base) || *base == "copy";
  }
  info.watched = watched(op);
  info.updatesInPlace = inPlaceBase(op) || (op.rfind("_foreach_", 0) == 0 && op.back() == '_');
  info.nonFiniteCheck = isNonFiniteCheck(op);
  info.scalingArithmetic = op == "mul" || op == "mul_" || op == "div_";
  info.cast = op == "to" || op == "_to_copy";
  info.mul = op == "mul";
  info.onesLike = op == "ones_like";
  info.clipStep = handClipStepOf(op);
  info.interesting = info.watched || info.updatesInPlace || info.nonFiniteCheck || info.scalingArithmetic ||
                     info.cast || info.onesLike || info.clipStep != HandClipStep::None;
  if (const auto handle = c10::Dispatcher::singleton().findSchema(name))
    for (const c10::Argument& argument : handle->schema().arguments())
      info.arguments.push_back({"'" + argument.name() + "'", argument.name() == "dtype", argument.name() == "dim",
                                argument.alias_info() && argument.alias_info()->isWrite() && argument.kwarg_only()});
  return info;
}

// Every operator's description, made once per process. The caller holds a
// HookScope: a fork must not copy the lock held.
const OpInfo& describedOp(const c10::OperatorName& name) {
  static std::mutex mutex;
  static auto* described = new std::map<std::pair<std::string, std::string>, std::unique_ptr<OpInfo>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& info = (*described)[{name.name, name.overload_name}];
  if (!info) info = std::make_unique<OpInfo>(describe(name));
  return *info;
}

// A backward() on `loss`: its dtype (DL106), the factor or the scale it was
// multiplied by (DL203, DL207), the parameters it reaches.
void observeBackward(const at::Tensor& loss) {
  dtype_lint_op_record record;
  startRecord(record, "backward");
  addInput(record, operand(loss, "'loss'"));
  dtype_lint_runtime_op(&record);
  dtype_lint_runtime_backward(loss.unsafeGetTensorImpl(), constantProducts.valueOf(loss));
  const int32_t lossKind = followBackward(loss);
  if (ampScaler().scaleKnown()) dtype_lint_runtime_amp_backward(lossKind);
  gradientPoints.parameterStorages.clear();
  for (const at::Tensor& parameter : reachedParameters.live())
    gradientPoints.parameterStorages.insert(parameter.storage().unsafeGetStorageImpl());
  gradientPoints.stepPending = true;
  handClips.backwardStarted();
}

// The key every op the program calls passes first: a mode key above
// autocast and autograd (the op arrives as the program called it), that
// PyTorch registers nothing on outside its own C++ tests, in 1.13 as in 2.x.
// Put in every thread's included keys: the autograd engine's threads (and
// at::launch's) take it from the thread that started them.
constexpr c10::DispatchKey kInterceptKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

void interceptOnThisThread() {
  c10::impl::tls_set_dispatch_key_included(kInterceptKey, true);
  threadState.dispatchKeys = &c10::impl::raw_local_dispatch_key_set;
}

// While one of the program's ops runs (and while the hooks look at it), the
// key is excluded: the ops LibTorch runs inside it (copy_ inside to(), addmm
// inside linear, autocast's casts, a kernel's own calls) never reach it.
class ProgramOp {
 public:
  explicit ProgramOp(ThreadState& state) : state_(state) {
    // A thread that took the key from another one's state (the autograd engine's, at::launch's).
    if (!state.dispatchKeys) state.dispatchKeys = &c10::impl::raw_local_dispatch_key_set;
    c10::impl::PODLocalDispatchKeySet& keys = *state.dispatchKeys;
    keys.set_excluded(keys.excluded().add(kInterceptKey));
  }
  ~ProgramOp() {
    c10::impl::PODLocalDispatchKeySet& keys = *state_.dispatchKeys;
    keys.set_excluded(keys.excluded().remove(kInterceptKey));
    // The GEMMs a matmul announced (its record's FLOPs) have run: the cuBLAS calls are its own.
    if (!state_.gemmAnnounced) return;
    state_.gemmAnnounced = false;
    const HookScope scope;
    if (scope) dtype_lint_runtime_gemm_done();
  }
  ProgramOp(const ProgramOp&) = delete;
  ProgramOp& operator=(const ProgramOp&) = delete;

 private:
  ThreadState& state_;
};

// The kernel of every op no rule looks at on kInterceptKey: it runs on the
// keys below, with the key excluded. (Boxing its arguments costs less than
// a RecordFunction callback on every op would.)
class ProgramOpUnobserved final : public c10::OperatorKernel {
 public:
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    const ProgramOp programOp(threadState);
    op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kInterceptKey), stack);
  }
};

// Counts the autograd nodes running on this thread: the ops inside a node's
// backward are autograd's (only a custom backward's matmuls are looked at).
// Records of ops are not asked for: a callback on them would cost every op a
// RecordFunction.
std::unique_ptr<at::ObserverContext> onNodeEnter(const at::RecordFunction&) {
  ThreadState& state = threadState;
  if (!state.dispatchKeys) interceptOnThisThread();
  ++state.backwardDepth;
  return nullptr;
}

void onNodeExit(const at::RecordFunction&, at::ObserverContext*) { --threadState.backwardDepth; }

// Where new threads cannot be given the key as they start (under
// ThreadSanitizer), a thread's first op gives it: a callback on every op's
// record, which only such runs pay for.
std::unique_ptr<at::ObserverContext> onOpEnterOnThreadWithoutKey(const at::RecordFunction&) {
  if (!threadState.dispatchKeys) interceptOnThisThread();
  return nullptr;
}

// An intercepted op the program called itself (not from inside another op),
// before it runs: what the rules see of it. A cast under autocast whose
// result is to be remembered is returned.
std::optional<ExplicitCastInAutocast> observeOp(const OpInfo* info, c10::ArrayRef<const c10::IValue> inputs,
                                                ThreadState& state) {
  const int backwardDepth = state.backwardDepth;
  if (state.pythonBackwardDepth > 0 && backwardDepth == 0) return std::nullopt;
  // Inside autograd's backward nodes only matmuls matter: a custom backward's
  // mixed operands (DL103) and its out= buffers (DL102). (Every intercepted
  // op is `interesting`.)
  if (backwardDepth > 0 && !info->matmul) return std::nullopt;
  const HookScope scope;
  if (!scope) return std::nullopt;
  std::optional<ExplicitCastInAutocast> cast;
  const std::string& op = info->op;
  if (info->onesLike && backwardDepth == 0 && calledFromBackward()) {
    observeBackward(inputs.at(0).toTensor());
    return std::nullopt;
  }
  if (backwardDepth == 0) {
    observeScalingOps(*info, inputs);
    observeAmpOps(*info, inputs);
    observeParameterUpdates(*info, inputs);
    observeOptimizerStep(*info, inputs);
    if (info->clipStep != HandClipStep::None) handClips.observe(info->clipStep, inputs);
    if (isCast(*info, inputs)) {
      const at::Tensor& source = inputs[0].toTensor();
      const auto to = castTarget(*info, inputs);
      if (to) observeHalfCast(op, source, *to);
      cast = observeExplicitCast(source, to);
    }
  }
  if (!info->watched) return cast;
  dtype_lint_op_record record;
  startRecord(record, op);
  bool dimGiven = false;
  bool onCpu = false, onCuda = false;  // where the op's tensors are
  // The operands (in `inputs`, which outlive this call: no reference counts taken).
  c10::SmallVector<std::pair<const at::Tensor*, const std::string*>, 4> floatInputs;  // what Half autocast would cast
  c10::SmallVector<const at::Tensor*, 4> tensorInputs;  // in order, for the op's FLOPs
  c10::SmallVector<std::pair<const c10::TensorImpl*, uint32_t>, 4> inputIndex;  // a tensor's place in record.inputs
  for (size_t i = 0; i < inputs.size() && i < info->arguments.size(); ++i) {
    const OpInfo::Argument& argument = info->arguments[i];
    const c10::IValue& value = inputs[i];
    if (argument.dtype && !value.isNone()) record.explicit_dtype = true;
    if (argument.dim && !value.isNone() && !(value.isIntList() && value.toIntList().empty())) dimGiven = true;
    const bool isOut = argument.out;
    if (value.isTensor()) {
      const at::Tensor& t = value.toTensor();
      // A Python number passed to an op (`grad.div_(1024.0)`) arrives as a
      // wrapped Double tensor; like a Scalar it takes no part in the result's dtype.
      if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) continue;
      onCpu |= t.device().is_cpu();
      onCuda |= t.device().is_cuda();
      if (!isOut) tensorInputs.push_back(&t);
      const dtype_lint_operand o = operand(t, argument.description);
      if (!isOut && (t.scalar_type() == c10::kFloat || t.scalar_type() == c10::kDouble))
        floatInputs.emplace_back(&t, &argument.description);
      if (isOut || (info->inPlace && i == 0)) {
        record.has_destination = true;
        record.destination = o;
        if (isOut || info->destinationOnly) continue;
      }
      inputIndex.emplace_back(t.unsafeGetTensorImpl(), record.input_count);
      addInput(record, o);
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList().vec())
        if (t.defined()) addInput(record, operand(t, argument.description));
    }
  }
  record.reduces_all_dims = needsFullReductionToBeSensitive(op) && !dimGiven;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // The per-device API of 2.4+: the older calls still exist there, but warn on every call.
  record.autocast_cuda =
      deviceAutocast(at::autocast::is_autocast_enabled(at::kCUDA), at::autocast::get_autocast_dtype(at::kCUDA));
  record.autocast_cpu =
      deviceAutocast(at::autocast::is_autocast_enabled(at::kCPU), at::autocast::get_autocast_dtype(at::kCPU));
#else
  record.autocast_cuda = deviceAutocast(at::autocast::is_enabled(), at::autocast::get_autocast_gpu_dtype());
  record.autocast_cpu = deviceAutocast(at::autocast::is_cpu_enabled(), at::autocast::get_autocast_cpu_dtype());
#endif
  // Autocast casts the ops of its own device only: CUDA autocast leaves an
  // op on CPU tensors alone (a program written for a GPU, run on CPU).
  if (onCpu || onCuda) {
    record.autocast_elsewhere = (record.autocast_cuda.enabled && !onCuda) || (record.autocast_cpu.enabled && !onCpu);
    if (!onCuda) record.autocast_cuda.enabled = 0;
    if (!onCpu) record.autocast_cpu.enabled = 0;
  }
  // Every GEMM once, the backward's too (on CUDA, the engine's device
  // threads run them): the cuBLAS calls under an announced one are its own.
  if (info->matmul) {
    record.flops = matmulFlops(info->gemmShape, tensorInputs);
    state.gemmAnnounced = record.flops > 0;
  }
  record.in_custom_backward = backwardDepth > 0;
  dtype_lint_runtime_op(&record);
  if (backwardDepth == 0) observeCastConsumers(record, inputIndex);
  const dtype_lint_autocast& autocast = onCuda ? record.autocast_cuda : record.autocast_cpu;
  if (backwardDepth == 0 && info->matmul && !record.has_destination && autocast.enabled &&
      autocast.dtype == DTYPE_LINT_DTYPE_HALF)
    observeAutocastHalfCasts(op, floatInputs);
  return cast;
}

// The kernel of an intercepted op on kInterceptKey: the op's arguments,
// boxed on the stack, are observed; then the op runs on the keys below.
class InterceptedOp final : public c10::OperatorKernel {
 public:
  explicit InterceptedOp(const OpInfo& info) : info_(info) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    ThreadState& state = threadState;
    const ProgramOp programOp(state);
    const size_t count = op.schema().arguments().size();
    const std::optional<ExplicitCastInAutocast> cast =
        observeOp(&info_, c10::ArrayRef<const c10::IValue>(stack->data() + stack->size() - count, count), state);
    op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kInterceptKey), stack);
    if (cast && !stack->empty()) {
      const HookScope scope;
      if (scope) rememberCastResult(*cast, stack->back());
    }
  }

 private:
  const OpInfo& info_;
};

// The ops some rule looks at get InterceptedOp; all others (other
// libraries' operators too, those registered later too) ProgramOpUnobserved.
bool interceptOps() {
  auto& dispatcher = c10::Dispatcher::singleton();
  if (dispatcher.hasBackendFallbackForDispatchKey(kInterceptKey)) {
    std::fprintf(stderr,
                 "dtype-lint: error: the process already uses the dispatch key %s: the runtime hooks are "
                 "off for it\n",
                 c10::toString(kInterceptKey));
    return false;
  }
  static auto* unobserved = new torch::Library(torch::Library::IMPL, "_", kInterceptKey, __FILE__, __LINE__);
  unobserved->fallback(torch::CppFunction::makeFromBoxedFunctor(std::make_unique<ProgramOpUnobserved>()));
  static auto* intercepted = new torch::Library(torch::Library::IMPL, "aten", kInterceptKey, __FILE__, __LINE__);
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    const OpInfo& info = describedOp(name);
    if (!info.interesting) continue;
    const std::string qualified = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    intercepted->impl(qualified.c_str(),
                      torch::CppFunction::makeFromBoxedFunctor(std::make_unique<InterceptedOp>(info)));
  }
  interceptOnThisThread();
  return true;
}

__attribute__((constructor)) void attach() {
  if (!dtype_lint_runtime_attach(DTYPE_LINT_BOUNDARY_VERSION, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR)) return;
  const HookScope scope;
  if (!scope || !interceptOps()) return;
  at::addGlobalCallback(
      at::RecordFunctionCallback(onNodeEnter, onNodeExit).scopes({at::RecordScope::BACKWARD_FUNCTION}));
  if (!dtype_lint_runtime_on_thread_start(interceptOnThisThread))
    at::addGlobalCallback(at::RecordFunctionCallback(onOpEnterOnThreadWithoutKey).scopes({at::RecordScope::FUNCTION}));
}

}  // namespace
}  // namespace dtype_lint::runtime

// Python's backward() runs no op the callback could tell from others
// (torch.autograd.backward makes its initial gradient in Python): the Python
// hooks call this with the loss (its TensorImpl, Tensor._cdata) as it starts,
// and dtype_lint_adapter_backward_end() when it returns or raises.
extern "C" __attribute__((visibility("default"))) void dtype_lint_adapter_backward(void* tensorImpl) {
  const dtype_lint::runtime::HookScope scope;
  if (!scope) return;
  if (!tensorImpl) return;
  const at::Tensor loss(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::unsafe_reclaim_from_nonowning(
      static_cast<c10::TensorImpl*>(tensorImpl)));
  dtype_lint::runtime::observeBackward(loss);
  ++dtype_lint::runtime::threadState.pythonBackwardDepth;
}

// The constant the user's code multiplied the tensor `tensorImpl` by to make
// it (`loss * 1024`), 0 if none: what Python's GradScaler.scale() is given.
extern "C" __attribute__((visibility("default"))) double dtype_lint_adapter_constant_factor(void* tensorImpl) {
  const dtype_lint::runtime::HookScope scope;
  if (!scope || !tensorImpl) return 0;
  const at::Tensor t(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::unsafe_reclaim_from_nonowning(
      static_cast<c10::TensorImpl*>(tensorImpl)));
  return dtype_lint::runtime::constantProducts.valueOf(t);
}

extern "C" __attribute__((visibility("default"))) void dtype_lint_adapter_backward_end() {
  const dtype_lint::runtime::HookScope scope;
  if (!scope) return;
  if (int& depth = dtype_lint::runtime::threadState.pythonBackwardDepth; depth > 0) --depth;
}
