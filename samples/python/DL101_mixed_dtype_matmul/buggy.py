# A Half batch meets Float weights outside autocast. PyTorch:
# RuntimeError: mat1 and mat2 must have the same dtype, but got Half and Float
# (on CUDA: expected mat1 and mat2 to have the same dtype, but got: c10::Half != float)
import torch


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.hidden(x)))  # dtype-lint-expect: DL101


torch.manual_seed(0)
model = Classifier()
batch = torch.randn(8, 16).half()  # "to save memory"
print(model(batch).shape)
