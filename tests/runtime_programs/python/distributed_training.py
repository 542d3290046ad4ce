# Run by torchrun with four workers: a data-parallel step on CPU (gloo), each
# rank clipping its scaled gradients. The report holds the finding once, made
# by ranks 0-3.
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
for step in range(2):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(torch.randn(4, 8)).float().pow(2).mean()
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # dtype-lint-expect: DL205
    scaler.step(optimizer)
    scaler.update()
print(f"rank {rank} of {os.environ['WORLD_SIZE']} done", flush=True)
# Each collective's Work holds the Python context torch stashed at the last
# backward(); gloo's worker thread drops the barrier's Work (and with it the
# allreduces it waited for) whenever it next runs. If that is after the
# interpreter began to finalize, taking the GIL there aborts the rank
# ("terminate called without an active exception", with or without
# dtype-lint; pytorch/pytorch#190489). Leaving without finalizing, as
# launchers' workers often do, avoids that race; the hooks report on _exit.
dist.barrier()
dist.destroy_process_group()
os._exit(0)
