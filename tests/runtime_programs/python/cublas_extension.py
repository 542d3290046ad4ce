# A library calling cuBLAS (the stand-in), opened as Python opens extension
# modules: RTLD_LOCAL, so cuBLAS is in its own scope only, as PyTorch's is.
import ctypes
import os
import sys

ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL).callCublasGemms()
