// DL302 fp16-overflow-cast: a feature cache kept in Half to halve its memory,
// filled with per-channel sums of raw 0-255 images (up to ~2.6e5): every
// value beyond 65504 becomes inf in the cache.
#include <torch/torch.h>

#include <iostream>

class FeatureCache {
 public:
  void put(const torch::Tensor& features) {
    entries_.push_back(features.to(torch::kHalf));  // dtype-lint-expect: DL302
  }
  torch::Tensor all() const { return torch::cat(entries_); }

 private:
  std::vector<torch::Tensor> entries_;
};

torch::Tensor channelSums(const torch::Tensor& images) { return images.sum({2, 3}); }

int main() {
  torch::manual_seed(0);
  FeatureCache cache;
  for (int batch = 0; batch < 4; ++batch) {
    auto images = torch::rand({8, 3, 32, 32}) * 255;
    cache.put(channelSums(images));
  }
  auto cached = cache.all();
  std::cout << "cached " << cached.size(0) << " feature rows, " << torch::isinf(cached).sum().item<int64_t>()
            << " of them inf\n";
  return 0;
}
