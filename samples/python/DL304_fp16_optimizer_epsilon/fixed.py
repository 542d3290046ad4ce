# The Half model's AdamW uses an eps Half can hold (1e-4 >= 6.1e-5).
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-4)
model.half()
inputs, targets = torch.randn(64, 16).half(), torch.randn(64, 1)
for step in range(3):
    optimizer.zero_grad()
    loss = (model(inputs).float() - targets).pow(2).mean()
    loss.backward()
    optimizer.step()
print("loss", loss.item())
