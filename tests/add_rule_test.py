#!/usr/bin/env python3
"""scripts/add_rule.py on a copy of the catalog: a new rule takes at most 8
files (its catalog entry, header, source, test file, docs page, two samples,
and the docs index --sync rewrites), and the rule's source and test file it
writes compile against the rule core's headers."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
work = Path(tempfile.mkdtemp(prefix="dtype_lint_add_rule_"))
try:
    catalog = work / "rules/include/dtype_lint/rules.def"
    catalog.parent.mkdir(parents=True)
    shutil.copy(ROOT / "rules/include/dtype_lint/rules.def", catalog)
    run = subprocess.run([sys.executable, str(ROOT / "scripts/add_rule.py"), "--root", str(work), "DL399",
                          "dummy-rule", "--summary", "A dummy rule the test adds and removes"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"add_rule.py failed: {run.stderr}")
    written = sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file())
    touched = written + ["docs/rules/README.md"]  # --sync's table
    print(f"{len(touched)} files: " + ", ".join(touched))
    if len(touched) > 8:
        sys.exit("a new rule takes more than 8 files")
    if "DTYPE_LINT_RULE(DL399" not in catalog.read_text():
        sys.exit("no catalog entry")
    for source in ("rules/src/dl399_dummy_rule.cpp", "tests/rules/DL399_dummy_rule_test.cpp"):
        compile_run = subprocess.run(["c++", "-std=c++20", "-fsyntax-only", f"-I{work}/rules/include",
                                      f"-I{ROOT}/rules/include", str(work / source)], capture_output=True, text=True)
        if compile_run.returncode != 0:
            sys.exit(f"{source} does not compile:\n{compile_run.stderr}")
    print("the generated rule and its test compile")
finally:
    shutil.rmtree(work)
