# The gradients are unscaled for clipping, then again before the step. PyTorch:
# RuntimeError: unscale_() has already been called on this optimizer since the last update().
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(torch.randn(8, 16)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.unscale_(optimizer)  # dtype-lint-expect: DL201
    scaler.step(optimizer)
    scaler.update()
