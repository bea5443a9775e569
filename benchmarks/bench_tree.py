"""Whole-tree call graph of SGLang 0.5.23's `sglang/srt`: ours (cold, warm) against peer tools.

Each run is a fresh process, timed from outside, with its peak resident memory from wait4(), or,
where it forks workers, the peak sum of their PSS (sampled every 0.5 s), whichever is larger.
"ours" is `python -m callgraph.cli export --root TREE --format json -o FILE`: "cold" with an
empty `--cache-dir`, "warm" again on that cache, "cold-j2" with `--jobs 2` on an empty cache. The peers (PyCG, jarviscg, pyan3, code2flow)
each get their own virtual environment outside the repo (created and filled by pip on first
use), run under `nice -n 19` with a time limit, and their output is parsed by `peers.py`:
edges, edges between functions of the tree, and whether the flagship chain
Kimi-K2.5 forward -> general_mm_embed_routine -> DeepseekV2ForCausalLM.forward ->
DeepseekV2Model.forward is in the graph (every consecutive pair an edge, names mapped per tool).

    python3 benchmarks/bench_tree.py                          # all tools, 600 s limit each
    python3 benchmarks/bench_tree.py --tools pycg,code2flow --limit 120 --json out.json

Targets for ours (2-core machine): cold <= 60 s, warm <= 10 s, RSS <= 2 GB, flagship chain in
the graph. See docs/benchmarks.md.

`--tree` picks the trees, side by side (peers run on SGLang only, the tree their chain is about):

    python3 benchmarks/bench_tree.py --tree transformers,vllm,sglang --tools ours --phases cold,warm

transformers 5.23.0 (`transformers/`, 2,860 files) and vLLM 0.33.0 (`vllm/`) are exported
the same way; their targets: cold <= 120 CPU s and <= 2 GB (issue 17). Our runs go under an
address-space limit (`--as-limit-gb`, default 8) so a regression cannot take a shared machine
down: it ends as exit 4 (MemoryError), a crash row.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
sys.path.insert(0, str(HERE / "benchmarks"))

from peers import PARSERS, TOOLS, in_tree, summarize  # noqa: E402
from upstream import cache_dir, fetch  # noqa: E402  (tests/upstream.py: pip download + unpack, cached)

TREE_SPEC = "sglang==0.5.23"
# name -> (pinned wheel, folder exported inside it)
TREES = {"sglang": (TREE_SPEC, "sglang/srt"), "transformers": ("transformers==5.23.0", "transformers"),
         "vllm": ("vllm==0.33.0", "vllm")}
# what "in tree" counts: edges between functions under this package (the chain is SGLang's alone)
TREE_PREFIX = {"sglang": "sglang.srt", "transformers": "transformers", "vllm": "vllm"}
TREE_TARGETS = {"transformers": {"cpu_s": 120, "rss_mb": 2048}, "vllm": {"cpu_s": 120, "rss_mb": 2048}}

# tool -> pip requirements of its virtual environment (versions found with `pip index versions`).
PEER_PACKAGES = {
    "pycg": ["pycg==0.0.7", "setuptools<81"],  # PyCG imports pkg_resources, gone in setuptools 81
    "jarviscg": ["jarviscg==0.1.0rc7"],        # only pre-releases exist
    "pyan3": ["pyan3==2.9.0"],
    "code2flow": ["code2flow==2.5.1"],
}
# PyCG's own preprocessor recurses once per nested import and dies of RecursionError on this
# tree in a few seconds; it is also run with a raised recursion limit to see how far it gets.
PYCG_DEEP = ("import runpy, sys; sys.setrecursionlimit(20000); sys.argv[0] = 'pycg'; "
             "runpy.run_module('pycg', run_name='__main__', alter_sys=True)")
PHASES = {"pycg": ("-", "rec20k")}
TARGETS = {"cold": {"seconds": 60, "rss_mb": 2048}, "warm": {"seconds": 10, "rss_mb": 2048}}


# -- running one process -----------------------------------------------------------------------
def timed(argv: list[str], cwd: Path, limit: float | None, stdout: Path, stderr: Path,
          env: dict | None = None) -> dict:
    """Run argv in its own process group: wall seconds, CPU seconds (user + system: what the run
    got of a shared machine), peak RSS (MB), exit status, timed out?"""
    t0 = time.perf_counter()
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    timed_out = False
    tree_kb, polls = 0, 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if limit is not None and time.perf_counter() - t0 > limit and not timed_out:
            timed_out = True
            _kill_group(proc.pid)
        polls += 1
        if polls % TREE_POLL == 0:
            tree_kb = max(tree_kb, _group_pss_kb(proc.pid))
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
    seconds = time.perf_counter() - t0
    return {"seconds": round(seconds, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "rss_mb": round(max(usage.ru_maxrss, tree_kb) / 1024),
            "exit": proc.returncode, "timed_out": timed_out}


# Every TREE_POLL-th poll (0.1 s each) sums the memory of the run's process group. Reading
# smaps_rollup walks a process's page tables, so it is not done more often, and not at all
# while the run is one process (wait4's peak is exact then).
TREE_POLL = 5


def _group_pss_kb(pgid: int) -> int:
    """The summed PSS (KB) of a process group of two or more processes (forked workers share
    their parent's pages: RSS would count those twice, PSS splits them); 0 for one process."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[2]) == pgid:
                        members.append(entry)
            except (OSError, ValueError, IndexError):
                continue
    if len(members) < 2:
        return 0
    total = 0
    for pid in members:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
        except OSError:
            continue
    return total


def _kill_group(pid: int) -> None:
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        t_end = time.perf_counter() + grace
        while time.perf_counter() < t_end:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    return
            except ChildProcessError:
                return
            time.sleep(0.1)


def last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


# -- peers -------------------------------------------------------------------------------------
def ensure_venv(tool: str, venvs: Path) -> Path:
    """The tool's virtual environment, created and pip-installed on first use."""
    venv = venvs / tool
    marker = venv / ".bench-installed"
    wanted = "\n".join(PEER_PACKAGES[tool])
    if marker.is_file() and marker.read_text() == wanted:
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venvs.mkdir(parents=True, exist_ok=True)
    print(f"[{tool}] creating {venv}: pip install {' '.join(PEER_PACKAGES[tool])}", flush=True)
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    pre = ["--pre"] if tool == "jarviscg" else []
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *pre, *PEER_PACKAGES[tool]], check=True)
    marker.write_text(wanted)
    return venv


def peer_argv(tool: str, phase: str, venv: Path, tree: Path, import_root: Path, out: Path) -> list[str]:
    files = sorted(str(p) for p in tree.rglob("*.py"))
    bin_ = venv / "bin"
    if tool == "pycg":
        start = ["-c", PYCG_DEEP] if phase == "rec20k" else ["-m", "pycg"]
        return [str(bin_ / "python"), *start, "--package", str(import_root), *files, "-o", str(out)]
    if tool == "jarviscg":
        return [str(bin_ / "jarviscg"), *files, "--package", str(import_root), "-o", str(out)]
    if tool == "pyan3":
        return [str(bin_ / "pyan3"), *files, "--root", str(import_root), "--uses", "--no-defines",
                "--dot", "--file", str(out)]
    if tool == "code2flow":
        return [str(bin_ / "code2flow"), str(tree), "--language", "py", "--quiet", "-o", str(out)]
    raise ValueError(tool)


def display(argv: list[str], subs: dict[str, str]) -> str:
    """argv as one line: runs of .py files folded to `<N files>`, long paths named."""
    words: list[str] = []
    run = 0
    for arg in [*argv, ""]:
        if arg.endswith(".py"):
            run += 1
            continue
        if run:
            words.append(f"<{run} .py files>")
            run = 0
        for old, new in subs.items():
            arg = arg.replace(old, new)
        words.append(arg)
    return " ".join(w for w in words if w)


def peer_version(tool: str, venv: Path) -> str:
    dist = {"pycg": "pycg", "jarviscg": "jarviscg", "pyan3": "pyan3", "code2flow": "code2flow"}[tool]
    proc = subprocess.run([str(venv / "bin" / "python"), "-c",
                           f"import importlib.metadata as m; print(m.version({dist!r}))"],
                          capture_output=True, text=True)
    return proc.stdout.strip()


def describe(tool: str, phase: str, run: dict, out: Path, err: Path, limit: float | None,
             tree: str = "sglang") -> dict:
    row = {"tool": tool, "phase": phase, **run}
    if run["timed_out"]:
        row["status"] = f"time limit ({limit:.0f} s)"
    elif run["exit"] != 0:
        row["status"] = f"crashed (exit {run['exit']}): {last_line(err)}"
    elif not out.is_file() or out.stat().st_size == 0:
        row["status"] = f"no output: {last_line(err)}"
    else:
        row["status"] = "ok"
    if row["status"] == "ok":
        try:
            text = out.read_text(errors="replace")
            if tree == "sglang":
                row.update(summarize(tool, text))
            else:
                edges = PARSERS[tool](text)
                row.update(edges=len(edges), edges_in_tree=in_tree(tool, edges, TREE_PREFIX[tree]))
        except (ValueError, KeyError, TypeError) as exc:
            row["status"] = f"unreadable output: {type(exc).__name__}: {exc}"
    return row


def run_peer(tool: str, tree: Path, import_root: Path, venvs: Path, limit: float, work: Path) -> list[dict]:
    venv = ensure_venv(tool, venvs)
    version = peer_version(tool, venv)
    suffix = ".dot" if tool == "pyan3" else ".json"
    rows = []
    for phase in PHASES.get(tool, ("-",)):
        out, err, log = work / f"{tool}{suffix}", work / f"{tool}.stderr", work / f"{tool}.stdout"
        argv = ["nice", "-n", "19", *peer_argv(tool, phase, venv, tree, import_root, out)]
        print(f"[{tool}] {phase} running (limit {limit:.0f} s) ...", flush=True)
        run = timed(argv, work, limit, log, err)
        row = describe(tool, phase, run, out, err, limit)
        row["version"] = version
        row["command"] = display(argv, {str(venv / "bin") + "/": "", str(tree): "TREE", str(import_root): "ROOT",
                                        str(out): "OUT" + suffix})
        rows.append(row)
        for path in (out, log, err):
            path.unlink(missing_ok=True)  # outputs can be hundreds of MB
    return rows


# -- ours --------------------------------------------------------------------------------------
OUR_PHASES = ("cold", "warm", "cold-j2")


def run_ours(tree: Path, limit: float, work: Path, as_limit_gb: float = 0,
             phases: tuple[str, ...] = OUR_PHASES, name: str = "sglang") -> list[dict]:
    cache = Path(tempfile.mkdtemp(prefix="cg-bench-tree-"))
    cache_j2 = Path(tempfile.mkdtemp(prefix="cg-bench-tree-j2-"))
    rows = []
    try:
        # cold, then warm on its cache; then cold again in two processes (--jobs 2, its own cache)
        for phase, extra, where in (("cold", [], cache), ("warm", [], cache), ("cold-j2", ["--jobs", "2"], cache_j2)):
            if phase not in phases:
                continue
            out, err = work / f"ours-{phase}.json", work / f"ours-{phase}.stderr"
            argv = [sys.executable, "-m", "callgraph.cli", "export", "--root", str(tree), "--format", "json",
                    "-o", str(out), "--cache-dir", str(where), *extra]
            if as_limit_gb and shutil.which("prlimit"):
                argv = ["prlimit", f"--as={int(as_limit_gb * 1e9)}", *argv]
            print(f"[ours] {phase} (limit {limit:.0f} s) ...", flush=True)
            run = timed(argv, HERE, limit, work / "ours.stdout", err)
            row = describe("ours", phase, run, out, err, limit, name)
            row["version"] = _git_head()
            row["command"] = display(argv, {sys.executable: "python", str(tree): "TREE", str(where): "CACHE",
                                            str(out): "OUT.json"})
            rows.append(row)
            out.unlink(missing_ok=True)
            if row["status"] != "ok":
                break  # a warm run without a finished cold run measures nothing
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(cache_j2, ignore_errors=True)
    return rows


def _git_head() -> str:
    proc = subprocess.run(["git", "-C", str(HERE), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    return proc.stdout.strip()[:72]


# -- table -------------------------------------------------------------------------------------
def fmt(row: dict) -> str:
    edges = f"{row['edges']:>9,}" if "edges" in row else f"{'-':>9}"
    in_tree = f"{row['edges_in_tree']:>9,}" if "edges_in_tree" in row else f"{'-':>9}"
    chain = {True: "yes", False: "NO"}.get(row.get("flagship"), "-") if row.get("tree", "sglang") == "sglang" else "-"
    return (f"{row.get('tree', 'sglang'):12} {row['tool']:10} {row['phase']:7} {row['seconds']:8.1f} {row['cpu_s']:8.1f} "
            f"{row['rss_mb']:8,} {edges} {in_tree} {chain:6} {row['status']}")


HEADER = (f"{'tree':12} {'tool':10} {'phase':7} {'seconds':>8} {'CPU s':>8} {'RSS MB':>8} {'edges':>9} {'in tree':>9} "
          f"{'chain':6} status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, from {','.join(TOOLS)} (default: all, peers first)")
    parser.add_argument("--limit", type=float, default=600, help="seconds per run (default 600)")
    parser.add_argument("--venvs", type=Path, default=None,
                        help="folder of the peers' virtual environments (default: <test cache>/bench-venvs)")
    parser.add_argument("--json", help="also write the rows here (rewritten after each tool)")
    parser.add_argument("--tree", default="sglang",
                        help=f"comma-separated, from {','.join(TREES)} (default: sglang)")
    parser.add_argument("--phases", default=",".join(OUR_PHASES),
                        help=f"our phases, comma-separated from {','.join(OUR_PHASES)} (default: all; "
                             "warm needs cold)")
    parser.add_argument("--as-limit-gb", type=float, default=8,
                        help="address-space limit of our runs, GB (default 8; 0: none)")
    ns = parser.parse_args()
    tools = [t.strip() for t in ns.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        parser.error(f"unknown tool(s) {', '.join(bad)}; choose from {', '.join(TOOLS)}")
    trees = [t.strip() for t in ns.tree.split(",") if t.strip()]
    bad = [t for t in trees if t not in TREES]
    if bad:
        parser.error(f"unknown tree(s) {', '.join(bad)}; choose from {', '.join(TREES)}")
    phases = tuple(p.strip() for p in ns.phases.split(",") if p.strip())
    bad = [p for p in phases if p not in OUR_PHASES]
    if bad or ("warm" in phases and "cold" not in phases):
        parser.error(f"--phases: choose from {', '.join(OUR_PHASES)}; warm runs on the cold run's cache, so it needs cold")
    tools = sorted(tools, key=lambda t: (t == "ours", TOOLS.index(t)))  # ours last
    venvs = (ns.venvs or cache_dir() / "bench-venvs").resolve()
    if venvs == HERE or HERE in venvs.parents:
        parser.error(f"--venvs must be outside the repository: {venvs}")

    meta = {"date": datetime.date.today().isoformat(), "trees": {}, "cpus": os.cpu_count(),
            "python": platform.python_version(), "limit_s": ns.limit, "as_limit_gb": ns.as_limit_gb}
    rows: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix="cg-bench-tree-work-"))
    try:
        for name in trees:
            spec, sub = TREES[name]
            import_root = fetch(spec)
            tree = import_root / sub
            files = sum(1 for _ in tree.rglob("*.py"))
            meta["trees"][name] = {"path": str(tree), "files": files}
            print(f"tree {name}: {tree} ({files} files), {os.cpu_count()} CPUs, limit {ns.limit:.0f} s", flush=True)
            for tool in tools:
                if tool == "ours":
                    new = run_ours(tree, ns.limit, work, ns.as_limit_gb, phases, name)
                elif name == "sglang":
                    new = run_peer(tool, tree, import_root, venvs, ns.limit, work)
                else:
                    continue  # the peers' chain is SGLang's
                for row in new:
                    row["tree"] = name
                    print(fmt(row), flush=True)
                    if row.get("missing"):
                        print(f"{'':16} missing: {'; '.join(row['missing'])}", flush=True)
                        print(f"{'':16} instead: {'; '.join(row['instead'])}", flush=True)
                rows.extend(new)
                if ns.json:
                    Path(ns.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(HEADER)
    for row in rows:
        print(fmt(row))
    for row in rows:
        if row["tool"] != "ours":
            continue
        if row["tree"] == "sglang" and row["phase"] in TARGETS:
            t = TARGETS[row["phase"]]
            met = (row["status"] == "ok" and row["seconds"] <= t["seconds"] and row["rss_mb"] <= t["rss_mb"]
                   and row.get("flagship"))
            print(f"target ours sglang {row['phase']}: <= {t['seconds']} s, <= {t['rss_mb']} MB, chain: "
                  f"{'met' if met else 'NOT met'}")
        elif row["tree"] in TREE_TARGETS and row["phase"] == "cold":
            t = TREE_TARGETS[row["tree"]]
            met = row["status"] == "ok" and row["cpu_s"] <= t["cpu_s"] and row["rss_mb"] <= t["rss_mb"]
            print(f"target ours {row['tree']} cold: <= {t['cpu_s']} CPU s, <= {t['rss_mb']} MB: "
                  f"{'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
