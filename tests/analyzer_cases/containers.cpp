// Tensors kept in containers: lists filled in loops, maps, named_parameters(),
// structured bindings, lists changed by a helper.
#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

// Mixture-of-experts weights made in a loop and converted with the model.
class ExpertBank {
 public:
  ExpertBank(int experts, int dim) {
    for (int e = 0; e < experts; ++e) experts_.push_back(torch::randn({dim, dim}).to(torch::kHalf));
  }
  torch::Tensor route(int expert) {
    auto tokens = torch::randn({4, 8});
    return torch::mm(tokens, experts_[expert]);  // dtype-lint-expect: DL101:12 {{'mm' on operands of different dtypes outside autocast ('tokens': Float, 'experts_[expert]': Half)}}
  }
  torch::Tensor first() { return torch::mm(torch::randn({4, 8}), experts_.front()); }  // dtype-lint-expect: DL101

 private:
  std::vector<torch::Tensor> experts_;
};

// The same bank kept in Float: silent.
class FloatExpertBank {
 public:
  FloatExpertBank(int experts, int dim) {
    for (int e = 0; e < experts; ++e) experts_.push_back(torch::randn({dim, dim}));
  }
  torch::Tensor route(int expert) { return torch::mm(torch::randn({4, 8}), experts_.at(expert)); }

 private:
  std::vector<torch::Tensor> experts_;
};

torch::Tensor concatenated_chunks(const torch::Tensor& batch) {
  torch::nn::Linear head(8, 8);
  std::vector<torch::Tensor> chunks;
  for (const auto& piece : batch.chunk(4)) chunks.push_back(piece.to(torch::kBFloat16));
  auto joined = torch::cat(chunks);
  return head(joined);  // dtype-lint-expect: DL101
}

torch::Tensor concatenated_float_chunks(const torch::Tensor& batch) {
  torch::nn::Linear head(8, 8);
  std::vector<torch::Tensor> chunks;
  for (const auto& piece : batch.chunk(4)) chunks.push_back(piece.to(torch::kFloat));
  return head(torch::cat(chunks));
}

// Tensors by name: a map's values and a module's named parameters.
void named_tensors() {
  auto probe = torch::randn({8, 8});
  std::map<std::string, torch::Tensor> activations;
  activations["q"] = torch::randn({8, 8}, torch::kHalf);
  activations["k"] = torch::randn({8, 8}, torch::kHalf);
  for (const auto& [name, activation] : activations) auto score = torch::mm(activation, probe);  // dtype-lint-expect: DL101
  for (const auto& entry : activations) auto score = torch::mm(entry.second, probe);  // dtype-lint-expect: DL101

  torch::nn::Linear adapter(8, 8);
  adapter->to(torch::kHalf);
  for (const auto& parameter : adapter->named_parameters())
    if (parameter.value().dim() == 2) auto score = torch::mm(parameter.value(), probe);  // dtype-lint-expect: DL101

  std::map<std::string, torch::Tensor> mixed;
  mixed["q"] = torch::randn({8, 8}, torch::kHalf);
  mixed["k"] = torch::randn({8, 8});
  for (const auto& [name, activation] : mixed) auto score = torch::mm(activation, probe);
}

// A helper that may change the list it is given: what was known is dropped.
void upcast_all(std::vector<torch::Tensor>& tensors) {
  for (auto& t : tensors) t = t.to(torch::kFloat);
}

void list_changed_by_a_helper() {
  auto probe = torch::randn({8, 8});
  std::vector<torch::Tensor> halves = {torch::randn({8, 8}, torch::kHalf)};
  upcast_all(halves);
  auto score = torch::mm(halves[0], probe);
  std::vector<torch::Tensor> kept;
  kept.push_back(torch::randn({8, 8}, torch::kHalf));
  kept.clear();
  kept.push_back(torch::randn({8, 8}));
  auto other = torch::mm(kept.back(), probe);
}

// chunk(), split() and unbind() return views of one tensor, each of its
// dtype: a fused projection split into its parts, directly or through a
// helper that reshapes each part into a list it returns.
std::vector<torch::Tensor> split_heads(const torch::Tensor& fused) {
  std::vector<torch::Tensor> heads;
  for (auto& part : fused.chunk(3, -1)) heads.push_back(part.reshape({-1, 4}));
  return heads;
}

void fused_projection_parts() {
  torch::nn::Linear head(4, 4);
  auto fused = torch::randn({2, 12}).to(torch::kHalf);
  auto parts = fused.chunk(3, -1);
  auto q = head(parts[0]);  // dtype-lint-expect: DL101
  auto k = head(split_heads(fused)[1]);  // dtype-lint-expect: DL101
  auto rows = torch::unbind(fused, 0);
  auto v = torch::mm(rows[0].reshape({3, 4}), torch::randn({4, 4}));  // dtype-lint-expect: DL101
  // The same parts upcast first, and a Float tensor's parts: no finding.
  auto upcast = head(fused.to(torch::kFloat).split(4, -1)[2]);
  auto floats = head(torch::randn({2, 12}).chunk(3, -1)[0]);
}

// A forward that returns several values, unpacked with a structured binding:
// each element by its position (the int in the middle is no tensor).
struct TwoHeadImpl : torch::nn::Module {
  TwoHeadImpl() {
    body = register_module("body", torch::nn::Linear(4, 4));
    proj = register_module("proj", torch::nn::Linear(4, 2));
  }
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    auto hidden = body(x);
    return {hidden, proj(hidden)};
  }
  torch::nn::Linear body{nullptr}, proj{nullptr};
};
TORCH_MODULE(TwoHead);

std::tuple<torch::Tensor, int, torch::Tensor> with_float_copy(const torch::Tensor& x) {
  return std::make_tuple(x, 1, x.to(torch::kFloat));
}

void several_returned_values() {
  TwoHead encoder;
  encoder->to(torch::kHalf);
  torch::nn::Linear probe(4, 3);
  auto [hidden, projected] = encoder->forward(torch::randn({2, 4}).to(torch::kHalf));
  auto probed = probe(hidden);  // dtype-lint-expect: DL101
  auto [half, count, upcast] = with_float_copy(torch::randn({2, 4}).to(torch::kHalf));
  auto first = probe(half);  // dtype-lint-expect: DL101
  auto clean = probe(upcast);
}

// LoRA adapters kept as (A, B) pairs in a vector, filled by emplace_back: an
// element's tensors, by subscript, front() or a structured binding.
void adapter_pairs_in_a_vector() {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> adapters;
  for (int layer = 0; layer < 2; ++layer) adapters.emplace_back(torch::randn({4, 8}), torch::zeros({8, 4}));
  auto x = torch::randn({3, 8}, torch::kBFloat16);
  torch::mm(x, adapters.front().first.t());  // dtype-lint-expect: DL101
  auto& [a, b] = adapters[1];
  torch::mm(x, a.t());  // dtype-lint-expect: DL101
}

// The same adapters made in the activations' dtype: nothing to report.
void adapter_pairs_in_the_activations_dtype() {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> adapters;
  for (int layer = 0; layer < 2; ++layer)
    adapters.push_back(std::make_pair(torch::randn({4, 8}, torch::kBFloat16), torch::zeros({8, 4}, torch::kBFloat16)));
  auto x = torch::randn({3, 8}, torch::kBFloat16);
  torch::mm(x, adapters.front().first.t());
  for (const auto& [a, b] : adapters) torch::mm(torch::mm(x, a.t()), b.t());
}

// A backbone keeps its layers in a std::vector member filled in its
// constructor: an element, by subscript, back() or a range-for, has the
// dtype it was pushed with; its forward walks them.
struct LayerStackImpl : torch::nn::Module {
  LayerStackImpl() {
    for (int i = 0; i < 3; ++i) layers.push_back(register_module("l" + std::to_string(i), torch::nn::Linear(8, 8)));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& layer : layers) x = torch::relu(layer(x));  // dtype-lint-expect: DL101
    return x;
  }
  std::vector<torch::nn::Linear> layers;
};
TORCH_MODULE(LayerStack);

torch::Tensor merged_delta(LayerStack& net, const torch::Tensor& a, const torch::Tensor& b, torch::Dtype dtype) {
  auto merged = torch::zeros_like(net->layers[0]->weight);
  return torch::matmul_out(merged, b.to(dtype), a.to(dtype));  // dtype-lint-expect: DL102:10 {{'matmul_out' writes a BFloat16 result into a Float destination 'merged'; out= variants are never autocast}}
}

void layers_in_a_vector_member() {
  LayerStack net;
  auto half = torch::randn({2, 8}, torch::kHalf);
  net->layers[1](half);  // dtype-lint-expect: DL101
  net->forward(half);
  torch::mm(half, net->layers.back()->weight.t());  // dtype-lint-expect: DL101
  merged_delta(net, torch::randn({4, 8}), torch::randn({8, 4}), torch::kBFloat16);
}

// The same layers converted, one by one, as a whole, or through the parent:
// which element has which dtype is not followed, so nothing is reported.
void layers_in_a_vector_member_converted() {
  auto half = torch::randn({2, 8}, torch::kHalf);
  LayerStack one;
  one->layers[0]->to(torch::kHalf);
  one->layers[0](half);
  LayerStack each;
  for (auto& layer : each->layers) layer->to(torch::kHalf);
  each->layers[2](half);
  LayerStack whole;
  whole->to(torch::kHalf);
  whole->layers[1](half);
  whole->forward(half);
  LayerStack floats;
  floats->layers[0](half.to(torch::kFloat));
  merged_delta(floats, torch::randn({4, 8}), torch::randn({8, 4}), torch::kFloat);
}

// A module returning its features and logits as a pair, unpacked with
// std::tie into tensors declared before: each has its element's dtype.
struct FeatureTeacherImpl : torch::nn::Module {
  FeatureTeacherImpl()
      : body(register_module("body", torch::nn::Linear(8, 8))), head(register_module("head", torch::nn::Linear(8, 2))) {}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    auto features = torch::gelu(body(x));
    return {features, head(features)};
  }
  torch::nn::Linear body, head;
};
TORCH_MODULE(FeatureTeacher);

void distill_through_tie(bool teacher_in_half) {
  FeatureTeacher teacher;
  const auto teacher_dtype = teacher_in_half ? torch::kHalf : torch::kFloat;
  teacher->to(teacher_dtype);
  torch::nn::Linear adapter(8, 8);
  torch::Tensor features, logits;
  std::tie(features, logits) = teacher->forward(torch::randn({2, 8}).to(teacher_dtype));
  auto projected = adapter(features);  // dtype-lint-expect: DL101
  std::tie(features, logits) = teacher->forward(torch::randn({2, 8}).to(teacher_dtype));
  auto upcast = adapter(features.to(torch::kFloat));
}
