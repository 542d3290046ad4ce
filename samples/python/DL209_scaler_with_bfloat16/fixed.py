# The scaler is enabled only where autocast runs in float16, as nanoGPT does:
# with bfloat16, scale() hands the loss back and step() is the optimizer's.
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16"])
args = parser.parse_args()
dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}[args.dtype]

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu", enabled=(dtype == torch.float16))
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=dtype):
        loss = model(torch.randn(8, 16)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
