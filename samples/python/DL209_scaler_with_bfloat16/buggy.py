# A GradScaler kept from an fp16 recipe after autocast moved to bfloat16:
# bfloat16 has float32's range, so loss scaling only costs time (and on CUDA
# the unscale kernel rejects bfloat16 gradients).
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16"])
args = parser.parse_args()
dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}[args.dtype]

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")  # dtype-lint-expect: DL209
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=dtype):
        loss = model(torch.randn(8, 16)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
