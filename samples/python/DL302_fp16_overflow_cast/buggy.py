# Evaluation under fp16 autocast of a linear probe on unnormalized features
# (sums of 0-255 pixels, up to ~2.6e5): autocast casts them to Half for the
# linear layer, where they become inf, and the logits become NaN.
import torch

torch.manual_seed(0)
probe = torch.nn.Linear(3, 10)
images = torch.rand(16, 3, 32, 32) * 255
features = images.sum(dim=(2, 3))
with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
    logits = probe(features)  # dtype-lint-expect: DL302
print("NaN logits:", torch.isnan(logits).sum().item())
