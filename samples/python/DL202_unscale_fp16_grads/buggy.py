# The model is made Half, then trained through a gradient scaler. PyTorch:
# ValueError: Attempting to unscale FP16 gradients.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
model.half()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 16).half()).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # dtype-lint-expect: DL202
    scaler.update()
