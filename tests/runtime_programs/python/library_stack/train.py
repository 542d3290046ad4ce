# A trainer on a model library installed outside site-packages (its folder
# comes through PYTHONPATH, as `pip install --target` leaves it). The
# library's own casts under autocast are not the user's to fix, and neither
# is the user's pre-norm idiom norm(x.float()).to(x.dtype); the findings are
# the user's own mistakes, at the user's lines: a Float head on the BFloat16
# model, a leftover optimizer.step(), and a GradScaler over a Half model,
# whose note points at the user's half() call, not at the library's.
import torch

import minimodel


class PreNormHead(torch.nn.Module):
    def __init__(self, hidden, classes):
        super().__init__()
        self.ln = torch.nn.LayerNorm(hidden)
        self.out = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        return self.out(self.ln(x.float()).to(x.dtype))


torch.manual_seed(0)
model = minimodel.TinyClassifier()
head = PreNormHead(32, 3)
optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
ids, labels = torch.randint(0, 64, (4, 8)), torch.randint(0, 3, (4,))
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = head(model.features(ids).mean(1))
        loss = torch.nn.functional.cross_entropy(logits, labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if step == 2:
        optimizer.step()  # dtype-lint-expect: DL208

model.to(torch.bfloat16)
model.score = torch.nn.Linear(32, 3)  # a new head, Float
try:
    with torch.no_grad():
        model(ids)  # dtype-lint-expect: DL101
except RuntimeError:
    print("Float head: raised")

model.half()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(ids).float().logsumexp(-1).mean()
scaler.scale(loss).backward()
for attempt in range(2):
    try:
        scaler.unscale_(optimizer)  # dtype-lint-expect: DL202
    except ValueError:
        print("Half model: raised")
