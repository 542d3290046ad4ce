# A model made Half to save memory, trained with AdamW's default eps=1e-8,
# which is 0 in Half: the update divides by sqrt(v) + 0, the weights become
# NaN after the first steps, and the optimizer then applies NaN gradients.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # dtype-lint-expect: DL304
model.half()
inputs, targets = torch.randn(64, 16).half(), torch.randn(64, 1)
for step in range(3):
    optimizer.zero_grad()
    loss = (model(inputs).float() - targets).pow(2).mean()
    loss.backward()
    optimizer.step()  # dtype-lint-expect: DL301
print("loss", loss.item())
