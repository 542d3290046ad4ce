# A log-likelihood takes the log of a probability that reaches exactly 0 for
# one class, so every backward makes NaN gradients. The GradScaler skips each
# step and halves its scale, as it would for an overflow, and training
# silently stands still: no error is ever raised.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
inputs, labels = torch.randn(32, 16), torch.randint(0, 4, (32,))
mask = torch.ones(4)
mask[3] = 0  # a class switched off by zeroing its probability
for step in range(10):
    optimizer.zero_grad()
    probabilities = torch.softmax(model(inputs), dim=-1) * mask
    loss = -torch.log(probabilities.gather(1, labels[:, None])).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # dtype-lint-expect: DL301
    scaler.update()
print("scale after 10 steps:", scaler.get_scale())
