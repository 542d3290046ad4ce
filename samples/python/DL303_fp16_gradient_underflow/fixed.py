# The GradScaler keeps its default init_scale (65536): the scaled gradients
# are well inside Half's normal range during the backward.
import torch

torch.manual_seed(0)
head = torch.nn.Linear(256, 256)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
inputs = torch.randn(64, 256)
with torch.no_grad():
    targets = head(inputs) * 1.001 + 0.001
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        prediction = head(inputs)
    loss = (prediction.float() - targets).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
print("loss", loss.item())
