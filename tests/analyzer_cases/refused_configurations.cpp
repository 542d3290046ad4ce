// A configuration the program refuses: its option parser throws on
// `--half-head` without `--amp`, so no run feeds a Half head Float inputs
// outside autocast. A call that never returns ends the path it is on (set AK
// p16: six findings under the refused combination).
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace refused_configurations {

struct Options {
  bool amp = false;
  bool half_head = false;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--amp") o.amp = true;
    else if (a == "--half-head") o.half_head = true;
  }
  if (o.half_head && !o.amp) throw std::invalid_argument("--half-head requires --amp");
  return o;
}

void train(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  torch::nn::Linear head(8, 2);
  if (opt.half_head) head->to(torch::kHalf);
  if (opt.amp) at::autocast::set_enabled(true);
  auto y = head(torch::randn({4, 8}));
  if (opt.amp) {
    at::autocast::set_enabled(false);
    at::autocast::clear_cache();
  }
  y.to(torch::kFloat).sum().backward();
}

}  // namespace refused_configurations
