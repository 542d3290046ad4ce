#include "decoder.h"

void run_decoder() {
  Decoder model;
  DecoderTrainer trainer(model);
  for (int i = 0; i < 3; ++i) trainer.step(torch::randn({4, 16}), torch::randint(0, 8, {4}));
}
