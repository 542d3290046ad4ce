# The class is switched off in the logits (masked to a large negative value)
# and the loss is computed with log_softmax: no log(0), finite gradients.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
inputs, labels = torch.randn(32, 16), torch.randint(0, 3, (32,))
mask = torch.zeros(4)
mask[3] = -1e4  # a class switched off in the logits
for step in range(10):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(inputs) + mask, labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
print("scale after 10 steps:", scaler.get_scale())
