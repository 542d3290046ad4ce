# The batch stays Float; autocast chooses the matmul dtype.
import torch


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.hidden(x)))


torch.manual_seed(0)
model = Classifier()
batch = torch.randn(8, 16)
with torch.autocast("cpu", dtype=torch.bfloat16):
    print(model(batch).shape)
