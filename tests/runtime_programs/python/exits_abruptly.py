# A training script that ends with os._exit(3) after a finding: no atexit
# handlers, no flushing of Python's buffers. The finding must be in the report
# and the status must be the script's.
import os
import sys

import torch

layer = torch.nn.Linear(4, 2)
try:
    layer(torch.randn(3, 4).half())  # dtype-lint-expect: DL101
except RuntimeError:
    print("mismatch raised", flush=True)
sys.stderr.flush()
os._exit(3)
