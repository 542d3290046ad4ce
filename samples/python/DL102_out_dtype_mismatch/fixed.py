# The gradient buffer has the dtype of the products written into it.
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
        torch.matmul(grad_out.t(), x, out=ctx.grad_buffer)
        return None, ctx.grad_buffer, None


torch.manual_seed(0)
x = torch.randn(4, 8, dtype=torch.bfloat16)
lora_a = torch.randn(2, 8, dtype=torch.bfloat16, requires_grad=True)
grad_buffer = torch.zeros(2, 8, dtype=torch.bfloat16)
LoraMatmul.apply(x, lora_a, grad_buffer).float().sum().backward()
print(lora_a.grad.shape)
