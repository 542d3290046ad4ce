#!/usr/bin/env python3
"""Precision and recall of the analyzer on a directory of marked programs.

Usage: scripts/heldout_eval.py DIR [RULE_PREFIX] [-- extra dtype-lint args]

Every `// dtype-lint-expect: DLnnn` marker in DIR/*.cpp is an expected finding
(file, line, rule); the files are analyzed with fallback flags (or a
compile_commands.json found next to them). Use it on programs written outside
this repository, to measure what the tests cannot: how the analyzer does on
code it was not tuned on.
"""
import glob
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tool = os.path.join(here, "..", "build", "analyzer", "dtype-lint")
args = sys.argv[1:]
extra = args[args.index("--") + 1:] if "--" in args else []
args = args[:args.index("--")] if "--" in args else args
directory, prefix = args[0], (args[1] if len(args) > 1 else "DL")
files = sorted(glob.glob(os.path.join(directory, "*.cpp")))
run = subprocess.run([tool, "--format", "json", *extra, *files], capture_output=True, text=True)
if run.returncode == 2:
    sys.exit(run.stderr)
found = {(os.path.basename(f["location"]["file"]), f["location"]["line"], f["rule"])
         for f in json.loads(run.stdout)["findings"] if f["rule"].startswith(prefix)}
expected = set()
for name in files:
    with open(name) as source:
        for number, line in enumerate(source, 1):
            marker = re.search(r"dtype-lint-expect:\s*([A-Z0-9, ]+)", line)
            for rule in re.findall(r"DL\d{3}", marker.group(1)) if marker else []:
                if rule.startswith(prefix):
                    expected.add((os.path.basename(name), number, rule))
hits = found & expected
print(f"true positives {len(hits)}, false positives {len(found - expected)}, missed {len(expected - found)}")
print(f"precision {len(hits) / max(1, len(found)):.3f}, recall {len(hits) / max(1, len(expected)):.3f}")
for item in sorted(found - expected):
    print("false positive", *item)
for item in sorted(expected - found):
    print("missed", *item)
