# Hand-rolled loss scaling: a fixed factor, gradients divided back, and no
# inf/NaN check before the step. PyTorch raises nothing.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
LOSS_SCALE = 1024.0
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 16)).pow(2).mean()
    (loss * LOSS_SCALE).backward()  # dtype-lint-expect: DL203
    for p in model.parameters():
        p.grad.div_(LOSS_SCALE)
    optimizer.step()
