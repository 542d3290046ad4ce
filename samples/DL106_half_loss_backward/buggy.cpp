// DL106 half-loss-backward: the whole model was converted to BFloat16 and the
// loss stays BFloat16 all the way to backward().
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(8, 16), torch::nn::ReLU(), torch::nn::Linear(16, 1));
  model->to(torch::kBFloat16);
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  auto inputs = torch::randn({32, 8}, torch::kBFloat16);
  auto targets = torch::randn({32, 1}, torch::kBFloat16);

  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto prediction = model->forward(inputs);
    auto error = prediction - targets;
    auto loss = (error * error).sum(0).squeeze();
    loss.backward();  // dtype-lint-expect: DL106
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }

  // The same through the free function.
  optimizer.zero_grad();
  auto last = (model->forward(inputs) - targets).abs().sum(0).squeeze();
  torch::autograd::backward({last});  // dtype-lint-expect: DL106
  optimizer.step();
  return 0;
}
