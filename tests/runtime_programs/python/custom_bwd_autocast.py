# A LoRA-style autograd.Function whose backward mixes the BFloat16 inputs it
# saved with the Float gradient: under custom_bwd the backward
# runs under the forward's autocast, which casts its matmuls (clean); the same
# backward without it raises, and is DL103.
import torch
from torch.amp import custom_bwd, custom_fwd


class Lora(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cpu")
    def forward(ctx, x, a):
        xa = x @ a.t()
        ctx.save_for_backward(x, xa)
        return xa

    @staticmethod
    @custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        x, xa = ctx.saved_tensors
        return None, grad.float().t().mm(x)  # Float x BFloat16, cast by the re-entered autocast


class LoraWithoutCustomBwd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a):
        xa = x @ a.t()
        ctx.save_for_backward(x, xa)
        return xa

    @staticmethod
    def backward(ctx, grad):
        x, xa = ctx.saved_tensors
        return None, grad.float().t().mm(x)  # dtype-lint-expect: DL103


x = torch.randn(4, 8).to(torch.bfloat16)  # the inputs, stored in BFloat16
a = torch.randn(2, 8, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = Lora.apply(x, a)
out.float().sum().backward()
print("custom_bwd", a.grad.dtype)
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = LoraWithoutCustomBwd.apply(x, a)
try:
    out.float().sum().backward()
except RuntimeError:
    print("without custom_bwd: raised")
