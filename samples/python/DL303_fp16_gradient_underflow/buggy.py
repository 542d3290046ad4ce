# fp16 autocast with a GradScaler whose init_scale=1.0 was copied from a
# bfloat16 config: the backward runs in Half with no scaling, and the small
# gradients of a nearly converged regression head are subnormal or zero in Half.
import torch

torch.manual_seed(0)
head = torch.nn.Linear(256, 256)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1.0)
inputs = torch.randn(64, 256)
with torch.no_grad():
    targets = head(inputs) * 1.001 + 0.001
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        prediction = head(inputs)
    loss = (prediction.float() - targets).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # dtype-lint-expect: DL303
    scaler.update()
print("loss", loss.item())
