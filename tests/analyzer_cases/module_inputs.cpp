// A user module converted as a whole, then called with an input of another
// dtype, raises inside its forward, but the call is what is wrong: the
// mismatch is reported there, through nested modules too. A mismatch the
// module's own code makes (a layer it converts itself, an input it casts)
// stays in it.
#include <torch/torch.h>

struct EncoderImpl : torch::nn::Module {
  EncoderImpl() {
    proj_ = register_module("proj", torch::nn::Linear(16, 32));
    head_ = register_module("head", torch::nn::Linear(32, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return head_(torch::gelu(proj_(x))); }
  torch::nn::Linear proj_{nullptr}, head_{nullptr};
};
TORCH_MODULE(Encoder);

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl() { encoder_ = register_module("encoder", Encoder()); }
  torch::Tensor forward(const torch::Tensor& x) { return encoder_(x); }
  Encoder encoder_{nullptr};
};
TORCH_MODULE(Classifier);

class HalfPredictor {
 public:
  explicit HalfPredictor(Classifier model) : model_(std::move(model)) { model_->to(torch::kHalf); }
  torch::Tensor predict(const torch::Tensor& batch) {
    return model_->forward(batch);  // dtype-lint-expect: DL101
  }
  torch::Tensor predict_cast(const torch::Tensor& batch) { return model_->forward(batch.to(torch::kHalf)); }

 private:
  Classifier model_;
};

void serve_float_batches() {
  HalfPredictor predictor{Classifier()};
  predictor.predict(torch::rand({4, 16}));
  predictor.predict_cast(torch::rand({4, 16}));
}

// The module converts one of its own layers: its forward is wrong for every caller.
struct MixedHeadImpl : torch::nn::Module {
  MixedHeadImpl() {
    body_ = register_module("body", torch::nn::Linear(16, 16));
    head_ = register_module("head", torch::nn::Linear(16, 4));
    head_->to(torch::kHalf);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return head_(body_(x));  // dtype-lint-expect: DL101
  }
  torch::nn::Linear body_{nullptr}, head_{nullptr};
};
TORCH_MODULE(MixedHead);

void run_mixed_head() {
  MixedHead net;
  net(torch::rand({2, 16}));
}

// A module of raw parameters multiplied functionally, converted as a whole by its owner.
struct BilinearImpl : torch::nn::Module {
  BilinearImpl() { weight_ = register_parameter("weight", torch::randn({8, 8})); }
  torch::Tensor forward(const torch::Tensor& x) { return torch::matmul(x, weight_); }
  torch::Tensor weight_;
};
TORCH_MODULE(Bilinear);

void score_pairs() {
  Bilinear scorer;
  scorer->to(torch::kBFloat16);
  auto features = torch::randn({3, 8});
  auto scores = scorer(features);  // dtype-lint-expect: DL101
  auto rescored = scorer(features.to(torch::kBFloat16));
}
