// DL304 fixed: Float master parameters for Adam (eps=1e-8 is fine in Float).
#include <torch/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  auto model = torch::nn::Sequential(torch::nn::Linear(16, 16), torch::nn::Tanh(), torch::nn::Linear(16, 1));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    auto loss = model->forward(torch::randn({8, 16})).pow(2).mean();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  return 0;
}
