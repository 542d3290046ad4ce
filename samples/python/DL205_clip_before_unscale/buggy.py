# Clipping the scaled gradients: the threshold applies to gradients times the
# scale (65536), so every step is clipped, and the unscaled gradients end up
# 65536x under the threshold, most below Half's normal range: the mistake is
# the clip's (DL205), not a loss scale too small (no DL303). PyTorch raises
# nothing.
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
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # dtype-lint-expect: DL205
    scaler.step(optimizer)
    scaler.update()
