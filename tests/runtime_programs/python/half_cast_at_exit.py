# The script's last work casts values beyond Half's range; with the counts
# deferred as a device's are (DTYPE_LINT_DEFER_CPU_COUNTS=1), they are read
# at Python's shutdown and reported at the cast.
import torch

activations = torch.full((64,), 1.0e5)
half = activations.to(torch.float16)  # dtype-lint-expect: DL302
print("cast", half.dtype)
