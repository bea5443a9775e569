"""What `--model-config` adds to a cold `callgraph reach` (issue 15: <= 1 s).

Two figures per tree, each in fresh processes on an empty cache folder:
- `read`: reading the tree's registries (every adapter's `find`, the config's validation) on a
  Project whose texts are already read, as a query's name lookup has read them;
- `reach`: one cold query with `--model-config` against the same query with the `--bind` that
  names the same classes (so both explore the same graph): the difference is the config's cost.

    python3 benchmarks/bench_registries.py            # transformers, SGLang, vLLM
    python3 benchmarks/bench_registries.py --only transformers
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

from upstream import fetch  # noqa: E402  (tests/upstream.py: pip download + unpack, cached)

CONFIGS = HERE / "tests" / "real_cases" / "configs"
TREES = {
    # tree: (wheel, root, entry, target, --model-config, the equivalent --bind)
    "transformers": ("transformers==5.23.0", "transformers", "LlavaForConditionalGeneration",
                     "transformers.models.llama.modeling_llama.LlamaModel.forward", CONFIGS / "llava.json",
                     "AutoModel.from_config=transformers.models.llama.modeling_llama.LlamaModel,"
                     "transformers.models.clip.modeling_clip.CLIPVisionModel"),
    "sglang": ("sglang==0.5.23", "sglang/srt", "KimiK25ForConditionalGeneration", "DeepseekV2Model",
               CONFIGS / "kimi_k25.json", None),
    "vllm": ("vllm==0.33.0", "vllm", "vllm.model_executor.models.kimi_k25.KimiK25ForConditionalGeneration.forward",
             "vllm.model_executor.models.deepseek_v2.DeepseekV2Model.forward", CONFIGS / "kimi_k25.json", None),
}

READ = """
import sys, time
from callgraph.index.project import Project
from callgraph.registries import Registries, read_model_config
from callgraph.roots import find_roots
p = Project(find_roots([sys.argv[1]], None))
p.texts()
t = time.perf_counter()
r = Registries(p, read_model_config(sys.argv[2]))
r.validate()
print(time.perf_counter() - t, [a.framework for a in r.adapters])
"""


def _reach(root: Path, entry: str, target: str, extra: list[str]) -> tuple[float, int]:
    cache = tempfile.mkdtemp(prefix="bench-registries-")
    try:
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "callgraph.cli", "reach", entry, target, "--root", str(root),
                               "--cache-dir", cache, *extra], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONHASHSEED="0"))
        return time.perf_counter() - t, proc.returncode
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(TREES))
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    rows = {}
    for name, (wheel, rel, entry, target, config, bind) in TREES.items():
        if args.only and name != args.only:
            continue
        root = fetch(wheel) / rel
        out = subprocess.run([sys.executable, "-c", READ, str(root), str(config)], capture_output=True, text=True,
                             check=True).stdout.split(maxsplit=1)
        row = {"read_s": round(float(out[0]), 3), "adapters": out[1].strip()}
        with_cfg, code = _reach(root, entry, target, ["--model-config", str(config)])
        row.update(reach_config_s=round(with_cfg, 2), reach_config_exit=code)
        if bind:
            with_bind, code = _reach(root, entry, target, ["--bind", bind])
            row.update(reach_bind_s=round(with_bind, 2), reach_bind_exit=code,
                       added_s=round(with_cfg - with_bind, 2))
        else:
            plain, code = _reach(root, entry, target, [])
            row.update(reach_plain_s=round(plain, 2), reach_plain_exit=code, added_s=round(with_cfg - plain, 2))
        rows[name] = row
        print(f"{name:13s} registries read {row['read_s']:.2f} s {row['adapters']}; cold reach with --model-config "
              f"{row['reach_config_s']:.1f} s (exit {row['reach_config_exit']}), "
              + (f"with the same --bind {row['reach_bind_s']:.1f} s" if bind else
                 f"without {row['reach_plain_s']:.1f} s") + f": added {row['added_s']:+.2f} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
