# A static loss scale left in a script that moved to GradScaler: the loss is
# scaled twice (DL203), and the scaler's inf checks see 1024 times the
# gradients it expects. A loss weight below 1 is no scaling.
import torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
STATIC_SCALE = 1024.0
for iteration in range(2):
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    if iteration == 0:
        scaler.scale(loss * STATIC_SCALE).backward()  # dtype-lint-expect: DL203
    else:
        scaler.scale(0.5 * loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
