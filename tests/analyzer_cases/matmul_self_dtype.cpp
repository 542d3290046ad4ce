// The self/input of the addmm family against its matrices (never autocast):
// the input of addmm(out=) is an operand (DL101); the self of addmm_ and
// baddbmm_ is the destination of matrices that agree (DL102). PyTorch raises
// "self and mat2 must have the same dtype" before it writes anything.
#include <torch/torch.h>

void lora_merged_into_float_weights() {
  auto weight = torch::zeros({8, 8});
  auto lora_b = torch::randn({8, 4}, torch::kBFloat16);
  auto lora_a = torch::randn({4, 8}, torch::kBFloat16);
  torch::addmm_out(weight, weight, lora_b, lora_a);  // dtype-lint-expect: DL101:3 {{'addmm_out' on operands of different dtypes outside autocast ('weight': Float, 'lora_b': BFloat16)}}
  weight.addmm_(lora_b, lora_a);  // dtype-lint-expect: DL102 {{in-place 'addmm_' computes BFloat16 but its destination 'weight' is Float}}
  auto scores = torch::zeros({2, 3, 3});
  auto q = torch::randn({2, 3, 5}, torch::kBFloat16);
  auto k = torch::randn({2, 5, 3}, torch::kBFloat16);
  scores.baddbmm_(q, k);  // dtype-lint-expect: DL102
}

void matching_dtypes_are_fine() {
  auto weight = torch::zeros({8, 8}, torch::kBFloat16);
  auto lora_b = torch::randn({8, 4}, torch::kBFloat16);
  auto lora_a = torch::randn({4, 8}, torch::kBFloat16);
  weight.addmm_(lora_b, lora_a);
  auto merged = torch::zeros({8, 8});
  torch::addmm_out(merged, merged, lora_b.to(torch::kFloat), lora_a.to(torch::kFloat));
}
