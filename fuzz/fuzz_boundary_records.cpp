// The records the adapter hands the preload core (boundary.h) are C structs
// whose counts, lengths and codes the core must not trust: any bytes read as
// an op record give an event the rules check, never an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dtype_lint/dtype_flow_rules.h"
#include "dtype_lint_runtime/boundary.h"
#include "op_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dtype_lint_op_record record;
  if (size < sizeof record) return 0;
  std::memcpy(&record, data, sizeof record);
  const dtype_lint::OpEvent event = dtype_lint::runtime::opEventOf(record);
  std::vector<dtype_lint::Finding> findings;
  for (int major : {1, 2}) {
    dtype_lint::DtypeFlowRules rules(dtype_lint::TorchVersion{major, 13});
    rules.onOp(event, findings);
    rules.checkCastInsideAutocast(event, findings);
  }
  int32_t loss = 0;
  std::memcpy(&loss, data + size - sizeof loss, sizeof loss);
  dtype_lint::runtime::ampLossOf(loss);
  return 0;
}
