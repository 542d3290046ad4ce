// Tensors kept in containers: lists filled in loops, maps, named_parameters(),
// structured bindings, lists changed by a helper.
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

// Mixture-of-experts weights made in a loop and converted with the model.
class ExpertBank {
 public:
  ExpertBank(int experts, int dim) {
    for (int e = 0; e < experts; ++e) experts_.push_back(torch::randn({dim, dim}).to(torch::kHalf));
  }
  torch::Tensor route(int expert) {
    auto tokens = torch::randn({4, 8});
    return torch::mm(tokens, experts_[expert]);  // dtype-lint-expect: DL101
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
