# The features are per-channel means of images scaled to [0, 1]: well inside
# Half's range when autocast casts them for the linear layer.
import torch

torch.manual_seed(0)
probe = torch.nn.Linear(3, 10)
images = torch.rand(16, 3, 32, 32) * 255
features = (images / 255).mean(dim=(2, 3))
with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
    logits = probe(features)
print("NaN logits:", torch.isnan(logits).sum().item())
