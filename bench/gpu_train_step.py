# A real GPU training step for scripts/gpu_check.sh: a 4-layer
# TransformerEncoder (d_model 512, batch 32 x 128), fp16 autocast and
# torch.amp.GradScaler with unscale and clipping. Prints the median seconds
# per step (synchronized) after a warm-up. With DTYPE_LINT_BENCH_FLOOR naming
# bench/record_function_floor.cpp built as a library, that library is loaded
# first: the step with an empty callback that boxes every op's inputs.
# With --cpu, the same step on the CPU at a size where, as on a GPU, the
# ops' CPU side (dispatch, and the hooks' cost per op) is most of the step:
# d_model 32, batch 4 x 16.
import ctypes
import os
import statistics
import sys
import time

import torch

if os.environ.get("DTYPE_LINT_BENCH_FLOOR"):
    ctypes.CDLL(os.environ["DTYPE_LINT_BENCH_FLOOR"])

arguments = [a for a in sys.argv[1:] if a != "--cpu"]
device = "cpu" if "--cpu" in sys.argv else "cuda"
steps = int(arguments[0]) if arguments else 150
width, heads, hidden, batch, tokens = (32, 4, 64, 4, 16) if device == "cpu" else (512, 8, 2048, 32, 128)
torch.manual_seed(0)
torch.set_num_threads(1)
layer = torch.nn.TransformerEncoderLayer(width, heads, hidden, batch_first=True)
model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 4), torch.nn.Linear(width, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), 1e-4)
scaler = torch.amp.GradScaler(device)
x = torch.randn(batch, tokens, width, device=device)
y = torch.randint(0, 10, (batch, tokens), device=device)


def synchronize():
    if device == "cuda":
        torch.cuda.synchronize()


def step():
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()


for _ in range(10):
    step()
synchronize()
times = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    synchronize()
    times.append(time.perf_counter() - start)
print(f"{statistics.median(times):.6f}")
