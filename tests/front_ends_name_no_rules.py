#!/usr/bin/env python3
"""The front ends report facts and the rules decide (docs/ARCHITECTURE.md):
no code of analyzer/, python_analyzer/ or runtime_hooks/ names a rule. Comments may (they say
which rule a fact is for); string literals, RuleId handles and identifiers may
not. Exit 1 with each offending line."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULE = re.compile(r"\bDL\d{3}\b|RuleId::")
C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
PY_COMMENT = re.compile(r"#[^\n]*|\"\"\".*?\"\"\"", re.S)


def code_of(path: Path) -> str:
    text = path.read_text()
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # keep line numbers
    return (PY_COMMENT if path.suffix == ".py" else C_COMMENT).sub(blank, text)


offences = []
for folder in ("analyzer", "python_analyzer", "runtime_hooks"):
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix not in (".cpp", ".h", ".cu", ".py"):
            continue
        for number, line in enumerate(code_of(path).split("\n"), 1):
            if RULE.search(line):
                offences.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
print("\n".join(offences) or "no rule named in the front ends' code")
sys.exit(1 if offences else 0)
