#!/usr/bin/env python3
"""Adds a rule to dtype-lint, or brings the docs made from the catalog up to date.

  add_rule.py DL306 loss-scale-too-small --severity warning --summary "..."
      writes the catalog entry (rules/include/dtype_lint/rules.def), the rule's
      header and source (rules/), its test file (tests/rules/), its docs page
      and its buggy/fixed samples, then --sync. The rule starts with no front
      end ("planned"): its markers are expected once its entry names one.
  add_rule.py --sync [--check]
      rewrites from the catalog (`dtype-lint --list-rules --format=json`) the
      rule table of docs/rules/README.md and each page's "Severity: ... Front
      ends: ..." line; --check only says what differs (exit 1).

Both take --tool (default build/analyzer/dtype-lint); after adding a rule,
rebuild it before --sync. docs/ARCHITECTURE.md walks through a new rule.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

INDEX_HEAD = """# Rules

Each rule has a page here; `dtype-lint --explain DLnnn` prints it. Rule IDs never change. This
file is made from the catalog (`rules/include/dtype_lint/rules.def`) by `scripts/add_rule.py
--sync`: edit the catalog, not this table.

| ID | name | severity | checked by | what it flags |
|---|---|---|---|---|
"""


def load_catalog(tool: str) -> list:
    run = subprocess.run([tool, "--list-rules", "--format=json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"error: {tool} --list-rules --format=json failed: {run.stderr.strip()}")
    return json.loads(run.stdout)["rules"]


def render_index(rules: list) -> str:
    rows = "".join(f"| [{r['id']}]({r['id']}.md) | {r['name']} | {r['severity']} | {r['frontEndsMarked']} | "
                   f"{r['shortDescription']} |\n" for r in rules)
    scopes = {r["cxxRuntimeScopeMark"]: r["cxxRuntimeScope"] for r in rules
              if "cxx-runtime" in r["frontEnds"] and r["cxxRuntimeScopeMark"]}
    notes = "".join(f"\n{mark} At run time in C++: for {scope}. In Python, `torch.amp.GradScaler` is followed "
                    f"directly.\n" for mark, scope in sorted(scopes.items(), key=lambda item: "¹²³⁴⁵".index(item[0])))
    return INDEX_HEAD + rows + notes


def page_line(rule: dict) -> str:
    return f"Severity: {rule['severity']}. Front ends: {rule['frontEndsText']}."


def sync(tool: str, check: bool) -> int:
    rules = load_catalog(tool)
    wanted = {ROOT / "docs/rules/README.md": render_index(rules)}
    for rule in rules:
        page = ROOT / rule["docs"]
        if not page.exists():
            print(f"{page.relative_to(ROOT)}: missing (every rule has a page)")
            return 1
        lines = page.read_text().split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith("Severity: ")), None)
        if at is None:
            print(f"{page.relative_to(ROOT)}: no 'Severity: ...' line under its title")
            return 1
        # The line may wrap: it runs to the first blank line.
        end = next((i for i in range(at, len(lines)) if not lines[i].strip()), len(lines))
        wanted[page] = "\n".join(lines[:at] + [page_line(rule)] + lines[end:])
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    for path in stale:
        if check:
            print(f"{path.relative_to(ROOT)}: not what the catalog makes (run scripts/add_rule.py --sync)")
        else:
            path.write_text(wanted[path])
    return 1 if check and stale else 0


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def add(rule_id: str, name: str, severity: str, summary: str) -> list:
    number = int(rule_id[2:])
    snake = name.replace("-", "_")
    facts, check = camel(name) + "Facts", "check" + camel(name)
    header = f"dl{number}_{snake}.h"
    catalog_path = ROOT / "rules/include/dtype_lint/rules.def"
    catalog = catalog_path.read_text()
    if re.search(rf"^DTYPE_LINT_RULE\({rule_id},", catalog, re.M):
        sys.exit(f"error: {rule_id} is in the catalog already")
    entry = (f"DTYPE_LINT_RULE({rule_id}, {c_string(name)}, {severity.capitalize()}, 0u, kAllPrograms,\n"
             f"                {c_string(summary)},\n                {c_string(summary)})\n")
    later = [m for m in re.finditer(r"^DTYPE_LINT_RULE\(DL(\d{3}),", catalog, re.M) if int(m.group(1)) > number]
    at = later[0].start() if later else catalog.index("\n#undef DTYPE_LINT_RULE") + 1
    files = {
        catalog_path: catalog[:at] + entry + catalog[at:],
        ROOT / "rules/include/dtype_lint" / header: f"""// {rule_id}: {summary}.
#pragma once

#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint {{

// What a front end knows when {rule_id} is decided.
struct {facts} {{
  SourceLocation location;
  bool violated = false;
}};

// {rule_id} where the facts say so.
void {check}(const {facts}& facts, std::vector<Finding>& out);

}}  // namespace dtype_lint
""",
        ROOT / f"rules/src/dl{number}_{snake}.cpp": f"""#include "dtype_lint/{header}"

namespace dtype_lint {{

void {check}(const {facts}& facts, std::vector<Finding>& out) {{
  if (!facts.violated) return;
  out.push_back(makeFinding(RuleId::{rule_id}, "{summary}", facts.location));
}}

}}  // namespace dtype_lint
""",
        ROOT / f"tests/rules/{rule_id}_{snake}_test.cpp": f"""// {rule_id} {name}: its unit cases (LibTorch-free).
// Its samples are samples/{rule_id}_{snake}/; its analyzer cases are the
// `dtype-lint-expect: {rule_id}` markers in tests/analyzer_cases/.
#include <gtest/gtest.h>

#include "dtype_lint/{header}"

namespace dtype_lint {{
namespace {{

TEST({rule_id}, ReportsWhereTheFactsSaySo) {{
  {facts} facts;
  facts.location = SourceLocation{{"train.cpp", 12, 5, 12, 20}};
  facts.violated = true;
  std::vector<Finding> out;
  {check}(facts, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].rule->handle, RuleId::{rule_id});
  EXPECT_EQ(out[0].location.line, 12u);
}}

TEST({rule_id}, CleanFactsMakeNoFinding) {{
  std::vector<Finding> out;
  {check}({facts}{{}}, out);
  EXPECT_TRUE(out.empty());
}}

}}  // namespace
}}  // namespace dtype_lint
""",
        ROOT / f"docs/rules/{rule_id}.md": f"""# {rule_id} {name}

Severity: {severity}. Front ends: planned.

## What it flags

{summary}.

## Why it matters

## The error it prevents

## Bad

```cpp
```

## Good

```cpp
```

## The fix
""",
        ROOT / f"samples/{rule_id}_{snake}/buggy.cpp": f"""// {rule_id}: {summary}.
#include <torch/torch.h>

int main() {{
  auto x = torch::ones({{4, 4}});
  x = x * 2;  // dtype-lint-expect: {rule_id}
  return 0;
}}
""",
        ROOT / f"samples/{rule_id}_{snake}/fixed.cpp": f"""// {rule_id}'s fixed twin.
#include <torch/torch.h>

int main() {{
  auto x = torch::ones({{4, 4}});
  x = x * 2;
  return 0;
}}
""",
    }
    for path, text in files.items():
        if path != catalog_path and path.exists():
            sys.exit(f"error: {path.relative_to(ROOT)} exists")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(str(p.relative_to(ROOT)) for p in files)


def main() -> int:
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("id", nargs="?", help="DLnnn: the next free number of its family (1xx dtypes, 2xx scaler, "
                                              "3xx numeric health)")
    parser.add_argument("name", nargs="?", help="kebab-case: loss-scale-too-small")
    parser.add_argument("--severity", choices=["note", "warning", "error"], default="warning")
    parser.add_argument("--summary", default="TODO: what it flags", help="one line, no final period")
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("--check", action="store_true", help="with --sync: change nothing, exit 1 on a difference")
    parser.add_argument("--tool", default=None, help="default: build/analyzer/dtype-lint")
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)  # another tree (tests/add_rule_test.py)
    args = parser.parse_args()
    if args.root:
        ROOT = args.root.resolve()
    if args.sync:
        return sync(args.tool or str(ROOT / "build/analyzer/dtype-lint"), args.check)
    if not args.id or not re.fullmatch(r"DL[1-9]\d\d", args.id):
        parser.error("a rule ID DLnnn is required (or --sync)")
    if not args.name or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.name):
        parser.error("a kebab-case name is required")
    for path in add(args.id, args.name, args.severity, args.summary.rstrip(".")):
        print(f"wrote {path}")
    print("next: build, then scripts/add_rule.py --sync; fill in the facts, the front ends' calls, the test's "
          "cases, the docs page and the samples; name the front ends in the catalog entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
