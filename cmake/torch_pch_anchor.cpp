// The translation unit that precompiles <torch/torch.h> for a build flavor (cmake/DtypeLintTorch.cmake).
