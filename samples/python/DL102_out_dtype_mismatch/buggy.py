# A LoRA-style custom backward writes BFloat16 products into a Float gradient
# buffer. PyTorch: RuntimeError: Expected out tensor to have dtype
# c10::BFloat16, but got float instead
import torch


class LoraMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lora_a, grad_buffer):
        ctx.save_for_backward(x)
        ctx.grad_buffer = grad_buffer
        return x @ lora_a.t()

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        torch.matmul(grad_out.t(), x, out=ctx.grad_buffer)  # dtype-lint-expect: DL102
        return None, ctx.grad_buffer, None


torch.manual_seed(0)
x = torch.randn(4, 8, dtype=torch.bfloat16)
lora_a = torch.randn(2, 8, dtype=torch.bfloat16, requires_grad=True)
grad_buffer = torch.zeros(2, 8)  # Float, as the optimizer's master copy
LoraMatmul.apply(x, lora_a, grad_buffer).float().sum().backward()
print(lora_a.grad.shape)
