# The cost per dispatched op from Python that a GPU step pays in full: tiny
# CPU ops in a loop, timed per kind of op (the Python counterpart of
# op_cost.cpp). Run plain and under the hooks by bench/op_overhead.sh.
# Prints "<kind> <ns per op>" lines.
import statistics
import sys
import time

import torch

ops = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
torch.set_num_threads(1)
torch.set_grad_enabled(False)
m, v, b = torch.randn(4, 4), torch.randn(4), torch.randn(4, 4)
sink = m.clone()


def ns_per_op(op, count, rounds):
    means = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(count):
            op()
        means.append((time.perf_counter_ns() - start) / count)
    return statistics.median(means)


kinds = {
    "add": lambda: m.add(b),
    "mv": lambda: torch.mv(m, v),
    "softmax": lambda: m.softmax(-1),
    "mul_": lambda: sink.mul_(1.0),
    "view": lambda: m.view(16),
}
for name, op in kinds.items():
    ns_per_op(op, ops // 10, 1)
    print(f"{name} {ns_per_op(op, ops, 5):.1f}")
