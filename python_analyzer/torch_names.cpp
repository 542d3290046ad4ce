#include "torch_names.h"

#include <algorithm>
#include <array>
#include <utility>

namespace dtype_lint::python {

std::optional<ScalarType> torchDtype(std::string_view dotted) {
  static constexpr std::array<std::pair<std::string_view, ScalarType>, 16> kDtypes{{
      {"torch.float16", ScalarType::Half},
      {"torch.half", ScalarType::Half},
      {"torch.bfloat16", ScalarType::BFloat16},
      {"torch.float32", ScalarType::Float},
      {"torch.float", ScalarType::Float},
      {"torch.float64", ScalarType::Double},
      {"torch.double", ScalarType::Double},
      {"torch.int64", ScalarType::Int64},
      {"torch.long", ScalarType::Int64},
      {"torch.int32", ScalarType::Int32},
      {"torch.int", ScalarType::Int32},
      {"torch.int16", ScalarType::Int16},
      {"torch.int8", ScalarType::Int8},
      {"torch.uint8", ScalarType::UInt8},
      {"torch.bool", ScalarType::Bool},
      {"torch.short", ScalarType::Int16},
  }};
  for (const auto& [name, dtype] : kDtypes)
    if (dotted == name) return dtype;
  return std::nullopt;
}

bool isLibraryName(std::string_view name, std::string_view canonical) { return name == canonical; }

bool isAutocastName(std::string_view name) {
  return name == "torch.autocast" || name == "torch.amp.autocast" || name == "torch.cuda.amp.autocast" ||
         name == "torch.cpu.amp.autocast" || name == "torch.amp.autocast_mode.autocast";
}

std::optional<ScalarType> conversionMethod(std::string_view method) {
  if (method == "half") return ScalarType::Half;
  if (method == "float") return ScalarType::Float;
  if (method == "bfloat16") return ScalarType::BFloat16;
  if (method == "double") return ScalarType::Double;
  return std::nullopt;
}

LayerKind layerKind(std::string_view className) {
  LayerKind kind;
  if (className == "Sequential" || className == "ModuleList" || className == "ModuleDict") {
    kind.container = true;
    return kind;
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kLosses{{
      {"CrossEntropyLoss", "cross_entropy"},
      {"NLLLoss", "nll_loss"},
      {"MSELoss", "mse_loss"},
      {"L1Loss", "l1_loss"},
      {"SmoothL1Loss", "smooth_l1_loss"},
      {"HuberLoss", "huber_loss"},
      {"BCELoss", "binary_cross_entropy"},
      {"BCEWithLogitsLoss", "binary_cross_entropy_with_logits"},
      {"KLDivLoss", "kl_div"},
      {"CTCLoss", "ctc_loss"},
      {"CosineEmbeddingLoss", "cosine_embedding_loss"},
      {"MarginRankingLoss", "margin_ranking_loss"},
  }};
  if (className.size() > 4 && className.substr(className.size() - 4) == "Loss") {
    kind.loss = true;
    kind.hasParameters = false;
    for (const auto& [name, op] : kLosses)
      if (className == name) kind.op = op;
    return kind;
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kLayers{{
      {"Linear", "linear"},
      {"Conv1d", "conv1d"},
      {"Conv2d", "conv2d"},
      {"Conv3d", "conv3d"},
      {"ConvTranspose1d", "conv_transpose1d"},
      {"ConvTranspose2d", "conv_transpose2d"},
      {"ConvTranspose3d", "conv_transpose3d"},
      {"Embedding", "embedding"},
      {"EmbeddingBag", "embedding_bag"},
      {"LayerNorm", "layer_norm"},
      {"GroupNorm", "group_norm"},
      {"Bilinear", "bilinear"},
      {"BatchNorm1d", "batch_norm"},
      {"BatchNorm2d", "batch_norm"},
  }};
  for (const auto& [name, op] : kLayers)
    if (className == name) kind.op = op;
  static constexpr std::array<std::string_view, 6> kComposite{"TransformerEncoder", "TransformerEncoderLayer",
                                                              "TransformerDecoder", "TransformerDecoderLayer",
                                                              "Transformer",        "RMSNorm"};
  static constexpr std::array<std::string_view, 4> kPairs{"MultiheadAttention", "LSTM", "GRU", "RNN"};
  kind.returnsPair = std::find(kPairs.begin(), kPairs.end(), className) != kPairs.end();
  kind.composite = kind.returnsPair || std::find(kComposite.begin(), kComposite.end(), className) != kComposite.end();
  static constexpr std::array<std::string_view, 24> kWithoutParameters{"ReLU",
                                                                       "GELU",
                                                                       "SiLU",
                                                                       "Tanh",
                                                                       "Sigmoid",
                                                                       "Dropout",
                                                                       "Dropout1d",
                                                                       "Dropout2d",
                                                                       "Identity",
                                                                       "Flatten",
                                                                       "Unflatten",
                                                                       "LeakyReLU",
                                                                       "ELU",
                                                                       "Mish",
                                                                       "Hardswish",
                                                                       "MaxPool1d",
                                                                       "MaxPool2d",
                                                                       "AvgPool1d",
                                                                       "AvgPool2d",
                                                                       "Upsample",
                                                                       "PixelShuffle",
                                                                       "AdaptiveAvgPool1d",
                                                                       "AdaptiveAvgPool2d",
                                                                       "Softplus"};
  if (std::find(kWithoutParameters.begin(), kWithoutParameters.end(), className) != kWithoutParameters.end())
    kind.hasParameters = false;
  return kind;
}

}  // namespace dtype_lint::python
