# optimizer.step() directly on the scaled gradients: no unscale, no inf check.
# PyTorch raises nothing.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    scaler.scale(loss).backward()
    optimizer.step()  # dtype-lint-expect: DL208
