#!/usr/bin/env python3
"""Precision and recall of dtype-lint on a directory of marked programs.

Usage: scripts/heldout_eval.py DIR [RULE_PREFIX] [--runtime BIN_DIR | --python PYTHON] [-- extra dtype-lint args]

Every `// dtype-lint-expect: DLnnn` marker in DIR/*.cpp (`#` in DIR/*.py) is an
expected finding (file, line, rule). Static (default): the .cpp and .py files
are analyzed with fallback flags (or a compile_commands.json found next to
them), and only markers of rules checked statically are expected. --runtime BIN_DIR: each
DIR/X.cpp's program BIN_DIR/X (built with -g) runs under `dtype-lint run`, and
only the markers of rules the runtime hooks check are expected. --python
PYTHON: each DIR/*.py script runs as `PYTHON X.py` under `dtype-lint run`
(markers `# dtype-lint-expect: DLnnn`). Use it on
programs written outside this repository, to measure what the tests cannot:
how dtype-lint does on code it was not tuned on. $DTYPE_LINT names another
dtype-lint binary than build/'s.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
tool = os.environ.get("DTYPE_LINT", os.path.join(here, "..", "build", "analyzer", "dtype-lint"))
args = sys.argv[1:]
extra = args[args.index("--") + 1:] if "--" in args else []
args = args[:args.index("--")] if "--" in args else args
binaries = python = None
for option in ("--runtime", "--python"):
    if option in args:
        at = args.index(option)
        binaries, python = (args[at + 1], None) if option == "--runtime" else (None, args[at + 1])
        del args[at:at + 2]
directory, prefix = args[0], (args[1] if len(args) > 1 else "DL")
# Programs may span several files in subdirectories; markers may sit in headers.
files = sorted(glob.glob(os.path.join(directory, "**", "*.py"), recursive=True)) if python else []
if binaries is None and python is None:  # static: C++ and Python sources alike
    files = sorted(glob.glob(os.path.join(directory, "**", "*.cpp"), recursive=True) +
                   glob.glob(os.path.join(directory, "**", "*.py"), recursive=True))
elif binaries is not None:
    files = sorted(glob.glob(os.path.join(directory, "**", "*.cpp"), recursive=True))
marked = sorted(set(files) | set(glob.glob(os.path.join(directory, "**", "*.h"), recursive=True)))


def key(finding, location=None):
    location = location or finding["location"]
    return os.path.relpath(os.path.realpath(location["file"]), os.path.realpath(directory)), \
        location["line"], finding["rule"]


def places(finding):
    """The finding's place and its notes' places: the other end of a call chain, the scale() of DL209."""
    return frozenset([key(finding)] + [key(finding, note) for note in finding.get("notes", []) if "file" in note])


found = set()
found_places = set()
if binaries is None and python is None:
    run = subprocess.run([tool, "--format", "json", *extra, *files], capture_output=True, text=True)
    if run.returncode == 2 and not run.stdout.startswith("{"):
        sys.exit(run.stderr)
    report = json.loads(run.stdout)
    # A file the analysis failed on (exit code 2) counts with no findings; it is named.
    for note in report.get("notifications", []):
        if "no findings for this file" in note["message"]:
            print(f"note: {note['file']}: {note['message']}")
    found = {key(f) for f in report["findings"]}
    found_places = {places(f) for f in report["findings"]}
    listing = subprocess.run([tool, "--list-rules", "--format=json"], capture_output=True, text=True,
                             check=True).stdout
    checked = {rule["id"] for rule in json.loads(listing)["rules"] if "static" in rule["frontEnds"]}
else:
    # The Python hooks follow the whole scaler protocol (GradScaler's API is
    # known): every marker is expected there, as in samples/python/.
    listing = subprocess.run([tool, "--list-rules", "--format=json"], capture_output=True, text=True,
                             check=True).stdout
    checked = None if python else {rule["id"] for rule in json.loads(listing)["rules"]
                                   if "cxx-runtime" in rule["frontEnds"]}
    for name in files:
        program = [python, name] if python else [os.path.join(binaries, os.path.splitext(os.path.basename(name))[0])]
        with tempfile.NamedTemporaryFile(suffix=".json") as report:
            run = subprocess.run([tool, "run", "--format", "json", "-o", report.name, *extra, "--", *program],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"note: {' '.join(program)} exited with {run.returncode}")
            findings = json.load(open(report.name))["findings"]
            found |= {key(f) for f in findings}
            found_places |= {places(f) for f in findings}
found = {f for f in found if f[2].startswith(prefix)}

expected = set()
for name in marked:
    with open(name) as source:
        for number, line in enumerate(source, 1):
            marker = re.search(r"dtype-lint-expect:\s*([A-Z0-9, ]+)", line)
            for rule in re.findall(r"DL\d{3}", marker.group(1)) if marker else []:
                if rule.startswith(prefix) and (checked is None or rule in checked):
                    expected.add((os.path.relpath(os.path.realpath(name), os.path.realpath(directory)), number, rule))
hits = found & expected
print(f"true positives {len(hits)}, false positives {len(found - expected)}, missed {len(expected - found)}")
print(f"precision {len(hits) / max(1, len(found)):.3f}, recall {len(hits) / max(1, len(expected)):.3f}")
# The catalog leaves some report places open (a helper's unscale or its call,
# a scaler's scale() or step()): a finding counts where a note names the marker's line.
found_places = {p for p in found_places if next(iter(p))[2].startswith(prefix)}
matched = {p for p in found_places if p & expected}
covered = {m for m in expected if any(m in p for p in found_places)}
print(f"counting notes' places too: precision {len(matched) / max(1, len(found_places)):.3f}, "
      f"recall {len(covered) / max(1, len(expected)):.3f}")
for item in sorted(found - expected):
    print("false positive", *item)
for item in sorted(expected - found):
    print("missed", *item)
