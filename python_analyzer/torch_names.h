// What the Python front end knows of PyTorch's names: dtype constants, the
// autocast context managers, nn layers and losses, conversion methods.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dtype_lint/dtype.h"

namespace dtype_lint::python {

// "torch.float16", "torch.half", "torch.bfloat16", ...
std::optional<ScalarType> torchDtype(std::string_view dotted);

// Whether a name as the imports spell it ("torch.nn.Module" from `nn.Module`
// after `from torch import nn`) is the library's `canonical` one.
bool isLibraryName(std::string_view name, std::string_view canonical);

// torch.autocast, torch.amp.autocast, torch.cuda.amp.autocast, torch.cpu.amp.autocast.
bool isAutocastName(std::string_view name);

// half(), float(), bfloat16(), double(): the dtype they convert to.
std::optional<ScalarType> conversionMethod(std::string_view method);

// What a torch.nn class is to the analysis.
struct LayerKind {
  bool container = false;  // Sequential, ModuleList, ModuleDict
  bool loss = false;  // CrossEntropyLoss...: no parameters, `op` on the input
  bool hasParameters = true;
  std::string op;  // the ATen op a call runs ("linear"); empty when not followed
  // A layer of several ops (TransformerEncoder, MultiheadAttention, LSTM):
  // outside autocast it computes in its parameters' dtype; `returnsPair`:
  // (output, attention weights or hidden state).
  bool composite = false;
  bool returnsPair = false;
};
LayerKind layerKind(std::string_view className);

}  // namespace dtype_lint::python
