# Run by torchrun with two workers: each worker meets the same Half/Float
# mismatch; the report holds it once, on this line.
import os

import torch

rank = int(os.environ["RANK"])
layer = torch.nn.Linear(4, 2)
try:
    layer(torch.randn(3, 4).half())  # dtype-lint-expect: DL101
except RuntimeError:
    print(f"worker {rank} raised", flush=True)
