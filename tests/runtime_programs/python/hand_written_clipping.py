# Clipping written by hand, as trainers copy it from clip_grad_norm_: the
# norm of the gradients (a norm op, or spelled out as pow(2).sum()), then the
# gradients multiplied in place; and a value clip by clamp_. On still-scaled
# gradients (DL205, where the norm is taken) the norm is ~65536 times too
# large and every step is clipped to almost nothing. After unscale_ the same
# code is right, and torch's own clip_grad_norm_ is reported once.
import torch


def clip_by_norm(parameters, max_norm):
    grads = [p.grad.detach() for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([g.norm(2) for g in grads]), 2)  # dtype-lint-expect: DL205
    coefficient = max_norm / (total + 1e-6)
    if coefficient < 1:
        for g in grads:
            g.mul_(coefficient)
    return total


def clip_by_spelled_out_norm(parameters, max_norm):
    params = [p for p in parameters if p.grad is not None]
    total = torch.sqrt(sum(p.grad.detach().pow(2).sum() for p in params))  # dtype-lint-expect: DL205
    coefficient = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for p in params:
        p.grad.detach().mul_(coefficient)


def clip_by_value(parameters, limit):
    for p in parameters:
        p.grad.data.clamp_(-limit, limit)  # dtype-lint-expect: DL205


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
for iteration in range(7):
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    if iteration == 0:
        clip_by_norm(list(model.parameters()), 1.0)
    elif iteration == 1:
        clip_by_value(model.parameters(), 0.5)
    elif iteration == 2:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # dtype-lint-expect: DL205
    elif iteration == 3:
        clip_by_spelled_out_norm(model.parameters(), 1.0)
    else:
        scaler.unscale_(optimizer)
        if iteration == 4:
            clip_by_norm(list(model.parameters()), 1.0)
            clip_by_spelled_out_norm(model.parameters(), 1.0)
        elif iteration == 5:
            clip_by_value(model.parameters(), 0.5)
        else:
            norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
            print("gradient norm", round(float(norm), 3))
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
