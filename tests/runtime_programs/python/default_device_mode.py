# torch.set_default_device wraps every call of the program in a torch
# function mode (DeviceContext), whose __torch_function__ frame sits above
# the user's line: it is torch's dispatch, not a library casting on its own,
# so a cast the user makes inside autocast is still theirs (DL104), and so
# are the other findings.
import torch

torch.set_default_device("cpu")
torch.manual_seed(0)
head = torch.nn.Linear(32, 8)
features, targets = torch.randn(16, 32).to(torch.bfloat16), torch.randn(16, 8)
for step in range(3):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        prediction = head(features.float())  # dtype-lint-expect: DL104
        loss = torch.nn.functional.mse_loss(prediction, targets)
    loss.backward()
try:
    head(features)  # dtype-lint-expect: DL101
except RuntimeError:
    pass
