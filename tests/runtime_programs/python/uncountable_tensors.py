# Casts to Half that the numeric-health checks cannot or need not count:
# tensors on the meta device (no data), integer and bool tensors, empty and
# zero-size ones. The program runs unchanged; the meta tensors get one note.
import torch

shapes = torch.empty(64, 128, device="meta")
for _ in range(3):
    planned = shapes.half()
print(planned.device, planned.dtype)
print(torch.arange(10).to(torch.float16)[:3].tolist())
print(torch.ones(3, dtype=torch.bool).half().tolist())
print(torch.empty(0, 5).half().shape, torch.randn(2, 0, 3).to(torch.float16).numel())
