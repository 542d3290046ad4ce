# Inside a CPU autocast region the features, stored in bfloat16, are cast to
# float32 by hand "to keep the classifier in full precision", but autocast
# casts a linear's operands back to bfloat16; and the float targets are cast
# to bfloat16 "to match" before mse_loss, which autocast runs in float32: the
# targets lose their precision for nothing.
import torch

torch.manual_seed(0)
head = torch.nn.Linear(32, 8)
optimizer = torch.optim.SGD(head.parameters(), lr=0.05)
features, targets = torch.randn(64, 32).to(torch.bfloat16), torch.randn(64, 8)
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        prediction = head(features.float())  # dtype-lint-expect: DL104
        loss = torch.nn.functional.mse_loss(prediction, targets.to(torch.bfloat16))  # dtype-lint-expect: DL104
    loss.backward()
    optimizer.step()
print("loss", loss.item())
