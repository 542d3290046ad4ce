# A DataLoader whose two worker processes cast raw sensor values to Half:
# they overflow to inf in the workers, which report it from their own
# processes.
import torch


class SensorWindows(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        raw = torch.full((16,), 70000.0 + index)
        return raw.half()  # dtype-lint-expect: DL302


if __name__ == "__main__":
    loader = torch.utils.data.DataLoader(SensorWindows(), batch_size=4, num_workers=2)
    batches = [batch for batch in loader]
    print(f"{len(batches)} batches, inf: {bool(torch.isinf(batches[0]).any())}", flush=True)
