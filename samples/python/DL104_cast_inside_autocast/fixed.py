# Autocast chooses the dtypes inside its region: bfloat16 for the linear
# layer, float32 for mse_loss.
import torch

torch.manual_seed(0)
head = torch.nn.Linear(32, 8)
optimizer = torch.optim.SGD(head.parameters(), lr=0.05)
features, targets = torch.randn(64, 32).to(torch.bfloat16), torch.randn(64, 8)
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        prediction = head(features)
        loss = torch.nn.functional.mse_loss(prediction, targets)
    loss.backward()
    optimizer.step()
print("loss", loss.item())
