# A BFloat16-autocast step with one projection kept in Float by a region that
# disables autocast; the BFloat16 GEMMs are the larger part. The profile
# (--profile) is at the Float GEMM's line, the one to look at, and counts
# each GEMM once, the backward's included.
import torch

torch.manual_seed(0)
encoder = torch.nn.Linear(256, 1024)
head = torch.nn.Linear(1024, 64)
x = torch.randn(64, 256)
for step in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = encoder(x)
        with torch.autocast("cpu", enabled=False):
            out = head(hidden.float())  # dtype-lint-expect: DL305
    out.sum().backward()
print("done")
