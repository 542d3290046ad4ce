// DL106 fixed: the loss is reduced in Float before backward().
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
    auto error = (prediction - targets).to(torch::kFloat);
    auto loss = (error * error).sum(0).squeeze();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }

  optimizer.zero_grad();
  auto last = (model->forward(inputs) - targets).abs().to(torch::kFloat).sum(0).squeeze();
  torch::autograd::backward({last});
  optimizer.step();
  return 0;
}
