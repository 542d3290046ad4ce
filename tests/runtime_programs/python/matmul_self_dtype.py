# The self/input of the addmm family against its matrices: PyTorch raises
# "self and mat2 must have the same dtype". The input of addmm(out=) is an
# operand (DL101); the self of addmm_/baddbmm_ is the destination (DL102). einsum under CPU autocast is fine:
# the bmm it contracts with is cast.
import torch

torch.manual_seed(0)
weight = torch.zeros(8, 8)  # the Float master copy
lora_b, lora_a = torch.randn(8, 4, dtype=torch.bfloat16), torch.randn(4, 8, dtype=torch.bfloat16)
scores = torch.zeros(2, 3, 3)
q, k = torch.randn(2, 3, 5, dtype=torch.bfloat16), torch.randn(2, 5, 3, dtype=torch.bfloat16)
raised = 0
for merge in (
    lambda: torch.addmm(weight, lora_b, lora_a, out=weight),  # dtype-lint-expect: DL101
    lambda: weight.addmm_(lora_b, lora_a),  # dtype-lint-expect: DL102
    lambda: scores.baddbmm_(q, k),  # dtype-lint-expect: DL102
):
    try:
        merge()
    except RuntimeError:
        raised += 1
weight.addmm_(lora_b.float(), lora_a.float())
with torch.autocast("cpu", dtype=torch.bfloat16):
    pooled = torch.einsum("bt,bth->bh", torch.randn(2, 3).softmax(-1).to(torch.bfloat16), torch.randn(2, 3, 4))
print("raised", raised, pooled.dtype)
