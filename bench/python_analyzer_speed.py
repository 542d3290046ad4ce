#!/usr/bin/env python3
"""The Python front end's speed, in one run over one corpus: the .py files of
the torch wheel's torch/optim, torch/amp, torch/nn and torch/utils/data (real
library code, imports within the tree followed) and samples/python.

Timed over the same files, each the best of --repeat runs:
  CPython parse   python3: ast.parse of every file, one process (the baseline)
  dtype-lint      build/analyzer/dtype-lint FILES (parse, analysis, rules, report)
Prints lines, seconds, lines per second (dtype-lint runs on one core) and the
ratio to the baseline.

  bench/python_analyzer_speed.py [--build build] [--venv .venv] [--repeat 3]
"""
import argparse
import glob
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best_of(repeat, argv):
    best = None
    for _ in range(repeat):
        start = time.monotonic()
        run = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.monotonic() - start
        if run.returncode not in (0, 1):
            sys.exit(f"{argv[0]} exited with {run.returncode}: {run.stderr.strip()[:400]}")
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--venv", default=str(ROOT / ".venv"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch_dirs = glob.glob(os.path.join(args.venv, "lib", "python3*", "site-packages", "torch"))
    if not torch_dirs:
        sys.exit(f"no torch package under {args.venv} (scripts/setup.sh installs it)")
    files = []
    for sub in ("optim", "amp", "nn", "utils/data"):
        files += sorted(glob.glob(os.path.join(torch_dirs[0], sub, "**", "*.py"), recursive=True))
    files += sorted(glob.glob(str(ROOT / "samples" / "python" / "**" / "*.py"), recursive=True))
    lines = sum(open(f, "rb").read().count(b"\n") for f in files)

    parse = "import ast, sys\nfor f in sys.argv[1:]:\n    ast.parse(open(f, 'rb').read())\n"
    baseline = best_of(args.repeat, [sys.executable, "-c", parse, *files])
    tool = best_of(args.repeat, [os.path.join(args.build, "analyzer", "dtype-lint"), "--format", "json", *files])
    print(f"{len(files)} files, {lines} lines")
    print(f"{'':16}{'seconds':>10}{'lines/s':>12}")
    print(f"{'CPython parse':16}{baseline:10.3f}{lines / baseline:12.0f}")
    print(f"{'dtype-lint':16}{tool:10.3f}{lines / tool:12.0f}")
    print(f"dtype-lint / CPython parse: {tool / baseline:.2f}x")


if __name__ == "__main__":
    main()
