# A real GPU training step for scripts/gpu_check.sh: a 4-layer
# TransformerEncoder (d_model 512, batch 32 x 128), fp16 autocast and
# torch.amp.GradScaler with unscale and clipping. Prints the median seconds
# per step (synchronized) after a warm-up. With DTYPE_LINT_BENCH_FLOOR naming
# bench/record_function_floor.cpp built as a library, that library is loaded
# first: the step with an empty callback that boxes every op's inputs.
import ctypes
import os
import statistics
import sys
import time

import torch

if os.environ.get("DTYPE_LINT_BENCH_FLOOR"):
    ctypes.CDLL(os.environ["DTYPE_LINT_BENCH_FLOOR"])

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 150
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 4), torch.nn.Linear(512, 10)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), 1e-4)
scaler = torch.amp.GradScaler("cuda")
x = torch.randn(32, 128, 512, device="cuda")
y = torch.randint(0, 10, (32, 128), device="cuda")


def step():
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()


for _ in range(10):
    step()
torch.cuda.synchronize()
times = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    times.append(time.perf_counter() - start)
print(f"{statistics.median(times):.6f}")
