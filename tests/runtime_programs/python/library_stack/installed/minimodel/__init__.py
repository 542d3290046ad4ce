"""A model library's code shapes, installed the way `pip install --target`
leaves a library (beside its .dist-info, outside any site-packages):
transformers' RMSNorm (a Float round trip) and half() override, and peft's
LoRA layer (its input cast to the adapter weights' dtype)."""
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, hidden):
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        hidden = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * hidden.to(dtype)


class LoraLinear(torch.nn.Module):
    def __init__(self, base, rank=4):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = torch.nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x):
        result = self.base(x)
        x = x.to(self.lora_A.weight.dtype)
        return result + self.lora_B(self.lora_A(x))


class TinyClassifier(torch.nn.Module):
    def __init__(self, vocab=64, hidden=32, classes=3):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.mix = torch.nn.Linear(hidden, hidden)
        self.norm = RMSNorm(hidden)
        self.proj = LoraLinear(torch.nn.Linear(hidden, hidden))
        self.score = torch.nn.Linear(hidden, classes)

    def features(self, ids):
        return self.proj(self.norm(self.mix(self.embed(ids))))

    def forward(self, ids):
        return self.score(self.features(ids).mean(1))

    def half(self, *args):
        return super().half(*args)
