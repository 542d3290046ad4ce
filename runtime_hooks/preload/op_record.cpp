#include "op_record.h"

#include <algorithm>

#include "dtype_lint/dtype_flow_rules.h"

namespace dtype_lint::runtime {
namespace {

// The boundary's codes are the rules' own enumerators, in the same order.
static_assert(DTYPE_LINT_DTYPE_BOOL == int(ScalarType::Bool) && DTYPE_LINT_DTYPE_HALF == int(ScalarType::Half) &&
              DTYPE_LINT_DTYPE_BFLOAT16 == int(ScalarType::BFloat16) &&
              DTYPE_LINT_DTYPE_DOUBLE == int(ScalarType::Double) &&
              DTYPE_LINT_DTYPE_DOUBLE + 1 == int(ScalarType::Count));

Operand operandOf(const dtype_lint_operand& o) {
  const auto type = scalarTypeOf(o.dtype);
  return Operand{textOf(o.description), type ? DtypeSet(*type) : DtypeSet::unknown(), std::nullopt};
}

DeviceAutocast autocastOf(const dtype_lint_autocast& a) {
  DeviceAutocast d;
  d.enabled = a.enabled ? Tristate::On : Tristate::Off;
  if (const auto type = scalarTypeOf(a.dtype)) d.dtype = DtypeSet(*type);
  return d;
}

}  // namespace

std::string textOf(const dtype_lint_text& text) {
  return std::string(text.bytes, std::min<uint32_t>(text.length, DTYPE_LINT_TEXT_CAPACITY));
}

std::optional<ScalarType> scalarTypeOf(int32_t dtypeCode) {
  if (dtypeCode < 0 || dtypeCode >= int32_t(ScalarType::Count)) return std::nullopt;
  return ScalarType(dtypeCode);
}

OpEvent opEventOf(const dtype_lint_op_record& record) {
  OpEvent event;
  event.op = textOf(record.op);
  for (uint32_t i = 0; i < std::min(record.input_count, DTYPE_LINT_MAX_OPERANDS); ++i)
    event.inputs.push_back(operandOf(record.inputs[i]));
  if (record.has_destination) event.destination = operandOf(record.destination);
  event.explicitDtype = record.explicit_dtype;
  event.reducesAllDims = record.reduces_all_dims;
  event.autocast.cpu = autocastOf(record.autocast_cpu);
  event.autocast.cuda = autocastOf(record.autocast_cuda);
  if (record.in_custom_backward) markRunInCustomBackward(event);
  return event;
}

AmpBackwardTrace::Loss ampLossOf(int32_t loss) {
  switch (loss) {
  case DTYPE_LINT_LOSS_SCALED: return AmpBackwardTrace::Loss::Scaled;
  case DTYPE_LINT_LOSS_UNSCALED: return AmpBackwardTrace::Loss::Unscaled;
  default: return AmpBackwardTrace::Loss::Unknown;
  }
}

}  // namespace dtype_lint::runtime
