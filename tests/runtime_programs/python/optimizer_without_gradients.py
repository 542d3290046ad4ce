# An actor-critic loop whose critic loss joins the scaled loss every second
# iteration only, while the scaler steps both optimizers every iteration: on
# the others the critic has no gradient, and PyTorch raises "No inf checks
# were recorded for this optimizer." (DL207).
import torch

torch.manual_seed(0)
actor, critic = torch.nn.Linear(8, 4), torch.nn.Linear(8, 1)
actor_opt = torch.optim.SGD(actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for iteration in range(2):
    x = torch.randn(16, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = actor(x).float().pow(2).mean()
        if iteration % 2 == 1:
            loss = loss + critic(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(actor_opt)
    try:
        scaler.step(critic_opt)  # dtype-lint-expect: DL207
    except AssertionError as error:
        print("iteration", iteration, error)
    scaler.update()
    actor_opt.zero_grad(set_to_none=True)
    critic_opt.zero_grad(set_to_none=True)
