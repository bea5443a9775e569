"""Generated Python programs through `callgraph export` and `callgraph reach`: no crash, and no
exit code outside the documented ones (callgraph/exit_codes.py).

Programs come from pysource-codegen (seeded, so seed N is the same program on every run of one
Python version): every statement and expression kind the running Python parses, names reused
across defs, classes and calls, nesting up to DEPTH_LIMIT. Each is module `m`, beside a
wrapper `w.py` whose `entry` calls into it; `reach` goes from `w.entry` to the last function the
export found in `m`, and to `w.nowhere`, which nothing calls (so the whole closure is explored
and the name bound decides between unreachable and unknown). Runs in-process through `callgraph.cli.main`, which is where a crash turns
into exit 4 and a line `callgraph: internal error`.

    python3 benchmarks/fuzz_programs.py                     # seeds 0..9999, counts at the end
    python3 benchmarks/fuzz_programs.py --start 20000 --count 500 --keep /tmp/crashes

tests/test_fuzz.py runs the first FUZZ_COUNT seeds (300) in CI.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from callgraph.cli import main  # noqa: E402
from callgraph.exit_codes import DOCUMENTED, ExitCode  # noqa: E402

# The generator's size knobs: ~750 characters a program, ~0.15 s to generate on one core.
NODE_LIMIT = 300
DEPTH_LIMIT = 5
WRAPPER = ("import m\nfrom m import *\n\n\ndef entry(arg):\n"
           + "".join(f"    m.name_{i}()\n    name_{i}(arg)\n    arg.name_{i}()\n" for i in range(6))
           + "    target()\n\n\ndef target():\n    pass\n\n\ndef nowhere():\n    pass\n")


@dataclass(frozen=True)
class Outcome:
    seed: int
    export: int | None  # None: the generator itself failed on this seed (not ours to count)
    reach: int | None = None    # w.entry to the last function of m (else to w.target)
    closure: int | None = None  # w.entry to w.nowhere, which nothing calls: the whole closure
    target: str = ""
    problem: str = ""   # a crash or an undocumented code, with the end of stderr


def program(seed: int) -> str | None:
    from pysource_codegen import generate

    try:
        return generate(seed, node_limit=NODE_LIMIT, depth_limit=DEPTH_LIMIT)
    except Exception:  # noqa: BLE001 - the generator's own bugs (e.g. ast.unparse on an f-string)
        return None


def check(seed: int, work: Path) -> Outcome:
    source = program(seed)
    if source is None:
        return Outcome(seed, None)
    root = work / f"p{seed}"
    root.mkdir(parents=True)
    (root / "m.py").write_text(source)
    (root / "w.py").write_text(WRAPPER)
    graph = root / "graph.json"
    export, err1 = _run(["export", "--root", str(root), "--no-cache", "-o", str(graph)])
    target = "w.target"
    if export == 0:
        names = [n["name"] for n in json.loads(graph.read_text())["nodes"]]
        inner = [n for n in names if n.startswith("m.") and "<" not in n]
        target = inner[-1] if inner else target
    reach, err2 = _run(["reach", "w.entry", target, "--root", str(root), "--no-cache"])
    closure, err3 = _run(["reach", "w.entry", "w.nowhere", "--root", str(root), "--no-cache"])
    problem = ""
    for code, err in ((export, err1), (reach, err2), (closure, err3)):
        if code not in DOCUMENTED or code == ExitCode.INTERNAL or "Traceback" in err:
            problem = f"exit {code}: {err[-2000:]}"
    if export != 0 and not problem:
        problem = f"export exit {export} on valid Python: {err1[-2000:]}"
    return Outcome(seed, export, reach, closure, target, problem)


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def run(start: int, count: int, keep: Path | None = None, report=print, progress: int = 0) -> list[Outcome]:
    out = []
    work = Path(tempfile.mkdtemp(prefix="callgraph-fuzz-"))
    try:
        for seed in range(start, start + count):
            o = check(seed, work)
            out.append(o)
            if o.problem:
                report(f"seed {seed}: {o.problem}")
                if keep is not None:
                    shutil.copytree(work / f"p{seed}", keep / f"p{seed}", dirs_exist_ok=True)
            shutil.rmtree(work / f"p{seed}", ignore_errors=True)
            if progress and len(out) % progress == 0:  # partial counts survive a stopped run
                report(f"after {len(out)} seeds: {json.dumps(summary(out))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def summary(outcomes: list[Outcome]) -> dict:
    ran = [o for o in outcomes if o.export is not None]
    return {"seeds": len(outcomes), "programs": len(ran), "generator_failed": len(outcomes) - len(ran),
            "export_codes": dict(sorted(Counter(o.export for o in ran).items())),
            "reach_codes": dict(sorted(Counter(o.reach for o in ran).items())),
            "closure_codes": dict(sorted(Counter(o.closure for o in ran).items())),
            "problems": [o.seed for o in ran if o.problem]}


def main_cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=10_000, help="seeds to run (default 10,000)")
    parser.add_argument("--keep", type=Path, help="copy each failing program into this folder")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    outcomes = run(args.start, args.count, args.keep,
                   report=lambda line: print(line, file=sys.stderr, flush=True), progress=500)
    result = summary(outcomes)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["cpu_seconds"] = round(time.process_time() - c0, 1)
    print(json.dumps(result, indent=2))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main_cli())
