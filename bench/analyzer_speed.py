#!/usr/bin/env python3
"""Analyzer speed, in one run on one compilation database: the samples plus a
generated corpus of LibTorch training TUs (bench/generate_corpus.py).

Timed, each over the same TUs with the same parallelism:
  plain parse   clang++-16 -fsyntax-only, one process per TU
  clang-tidy    clang-tidy-16 with one flow-sensitive check (bugprone-use-after-move)
  dtype-lint    cold (empty cache: builds the preamble PCH), warm (PCH cached,
                every TU analyzed: --no-cache), re-run (unchanged tree: result cache)
and the same cold/plain comparison over the first 20 TUs. Peak RSS is per
process (one per TU for the compilers; dtype-lint -j 1 for one worker).
Prints a table and the ratios to the plain parse, and how many preamble PCHs
the cache holds; checks that every dtype-lint run reports the same findings.

--layout own-header lays the generated TUs out as real projects do: each
starts with its own header (which includes LibTorch), and they belong to two
targets built with other flags (-O2 -g -fPIC -Wall, -O0 -g -Wextra).

  bench/analyzer_speed.py [--build build] [--tus 50] [--jobs N] [--layout torch-first|own-header]
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_measured(argv, cwd=None):
    """Runs argv; returns (seconds, peak RSS in MiB, exit code, stdout)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        out.seek(0)
        return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out.read().decode()


def run_parallel(commands, jobs):
    """Runs one process per command, `jobs` at a time; (wall seconds, max peak RSS MiB)."""
    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda c: run_measured(c[0], c[1]), commands))
    return time.monotonic() - start, max(r[1] for r in results)


TARGET_FLAGS = [["-O2", "-g", "-fPIC", "-Wall"], ["-O0", "-g", "-Wextra"]]


def corpus_database(build: Path, corpus: Path, tus: int, own_header: bool) -> list:
    """The samples' compile commands plus one per generated TU, with the same
    flags (and, with own headers, those of one of two targets)."""
    entries = [dict(e, command=without_build_pch(e["command"]))
               for e in json.loads((build / "compile_commands.json").read_text())
               if "/samples/" in e["file"] and "/common/" not in e["file"]]
    if not entries:
        sys.exit(f"no samples in {build}/compile_commands.json: build the project first")
    subprocess.run([sys.executable, str(ROOT / "bench/generate_corpus.py"), str(tus), str(corpus),
                    *(["--own-header"] if own_header else [])], check=True)
    template = shlex.split(entries[0]["command"])
    for i in range(tus):
        source = corpus / f"train_{i:03d}.cpp"
        argv = [a if a != entries[0]["file"] else str(source) for a in template]
        argv[1:1] = [f"-I{corpus}", *(TARGET_FLAGS[i % 2] if own_header else [])]
        out = argv.index("-o")
        argv[out + 1] = f"{source.stem}.o"
        entries.append({"directory": str(corpus), "file": str(source), "command": shlex.join(argv)})
    return entries


def without_build_pch(command: str) -> str:
    """The samples build with CMake's GCC precompiled header (-include .../cmake_pch.hxx): clang++
    stops at once on a PCH it cannot read, so the tools compared here get the plain command."""
    argv, out, skip = shlex.split(command), [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
        elif a == "-include" and i + 1 < len(argv) and argv[i + 1].endswith("cmake_pch.hxx"):
            skip = True
        elif a != "-Winvalid-pch":
            out.append(a)
    return shlex.join(out)


def syntax_only(entry) -> tuple:
    argv = shlex.split(entry["command"])
    flags, skip = [], False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a not in ("-c", entry["file"]):
            flags.append(a)
    return ["clang++-16", "-fsyntax-only", *flags, entry["file"]], entry["directory"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--tus", type=int, default=50, help="generated TUs besides the samples (default 50)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--layout", choices=["torch-first", "own-header"], default="torch-first")
    args = parser.parse_args()
    build = Path(args.build).resolve()
    lint = build / "analyzer/dtype-lint"
    for tool in ("clang++-16", "clang-tidy-16"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (scripts/setup.sh installs it)")

    work = Path(tempfile.mkdtemp(prefix="dtype_lint_bench_"))
    corpus = work / "corpus"
    entries = corpus_database(build, corpus, args.tus, args.layout == "own-header")
    (corpus / "compile_commands.json").write_text(json.dumps(entries, indent=1))
    files = [e["file"] for e in entries]
    first20 = entries[:20]
    print(f"{len(entries)} TUs ({len(entries) - args.tus} samples + {args.tus} generated, {args.layout} layout),"
          f" -j {args.jobs}", flush=True)

    def lint_run(cache, *options, tus=files, jobs=args.jobs):
        return run_measured([str(lint), "-p", str(corpus), f"-j{jobs}", "--cache-dir", str(cache), *options, *tus])

    rows, outputs = [], {}

    def record(name, seconds, rss, output=None):
        rows.append((name, seconds, rss))
        if output is not None:
            outputs[name] = output
        print(f"  {name:<34} {seconds:8.2f} s  {rss:7.0f} MiB", flush=True)

    plain_s, plain_rss = run_parallel([syntax_only(e) for e in entries], args.jobs)
    record("clang++-16 -fsyntax-only", plain_s, plain_rss)
    tidy = [(["clang-tidy-16", "-p", str(corpus), "--quiet", "--checks=-*,bugprone-use-after-move", e["file"]],
             None) for e in entries]
    record("clang-tidy-16 (bugprone-use-after-move)", *run_parallel(tidy, args.jobs))

    cache = work / "cache"
    s, rss, _, out = lint_run(cache)
    record("dtype-lint cold (builds the PCH)", s, rss, out)
    s, rss, _, out = lint_run(cache, "--no-cache")
    record("dtype-lint warm (PCH, no result cache)", s, rss, out)
    s, rss, _, out = lint_run(cache)
    record("dtype-lint re-run, unchanged tree", s, rss, out)
    s, worker_rss, _, _ = lint_run(cache, "--no-cache", tus=files[:4], jobs=1)
    record("dtype-lint -j1 on 4 TUs (one worker)", s, worker_rss)

    plain20_s, plain20_rss = run_parallel([syntax_only(e) for e in first20], args.jobs)
    record("clang++-16 -fsyntax-only, 20 TUs", plain20_s, plain20_rss)
    s20, rss20, _, _ = lint_run(work / "cache20", tus=[e["file"] for e in first20])
    record("dtype-lint cold, 20 TUs", s20, rss20)

    identical = len(set(outputs.values())) == 1
    findings = sum(line.endswith("]") and (": warning: " in line or ": error: " in line)
                   for line in next(iter(outputs.values())).splitlines())
    planted = sum(Path(f).read_text().count("// planted: DL") for f in files)
    by_name = {name: seconds for name, seconds, _ in rows}
    print()
    print(f"warm / plain parse          {by_name['dtype-lint warm (PCH, no result cache)'] / plain_s:.3f}  (goal <= 0.2)")
    print(f"cold / plain parse, 20 TUs  {s20 / plain20_s:.3f}  (goal <= 0.5)")
    print(f"cold / plain parse, all     {by_name['dtype-lint cold (builds the PCH)'] / plain_s:.3f}")
    print(f"clang-tidy / plain parse    {by_name['clang-tidy-16 (bugprone-use-after-move)'] / plain_s:.3f}")
    print(f"re-run, unchanged tree      {by_name['dtype-lint re-run, unchanged tree']:.2f} s  (goal <= 1 s)")
    print(f"peak RSS of one worker      {worker_rss:.0f} MiB  (goal <= 1024)")
    pchs = list((cache / "preambles").glob("*.pch"))
    print(f"preamble PCHs in the cache  {len(pchs)} ({sum(p.stat().st_size for p in pchs) / 2**20:.0f} MiB)")
    print(f"findings identical across dtype-lint runs: {'yes' if identical else 'NO'}"
          f" ({findings} findings; {planted} bugs planted in the generated TUs, plus the samples' markers)")
    shutil.rmtree(work)
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
