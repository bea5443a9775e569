"""Token-budget batches, data parallelism through torch.distributed (gloo on CPU), --dry-run.

A run's batches are a function of the data file alone (`data.plan`), so a data-parallel run, a
resumed run and a one-process run compute every sample in the same batch: their datasets are
equal tensor for tensor, whatever the number of ranks.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.cli import main  # noqa: E402
from callgraph.hooks.data import DataSummary, plan  # noqa: E402
from callgraph.hooks.formats import get_format  # noqa: E402

ROWS = tiny.samples(30, seed=6, lo=3, hi=40)
ARGS = ["--layers", "1,3,5", "--convention", "output", "--dtype", "fp32", "--device", "cpu",
        "--max-tokens", "64", "--shard-mb", "1"]
# one thread a process, as torchrun gives each rank: the same kernels, so the same bits
ENV = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
    [str(Path(__file__).parent), str(Path(__file__).parents[2])]))


def test_plan_packs_by_budget_longest_first():
    lengths = {0: 5, 1: 40, 2: 7, 3: 39, 4: 6, 5: 20}
    s = DataSummary(lengths=lengths)
    got = plan(s, None, 80)
    assert got == [[1, 3], [5, 2, 4, 0]]              # 2 x 40 <= 80; then 4 x 20 <= 80
    assert all(len(b) * max(lengths[i] for i in b) <= 80 for b in got)
    assert plan(s, 3, 80) == [[1, 3], [5, 2, 4], [0]]  # --batch-size caps a batch too
    assert plan(s, 4, None) == [[0, 1, 2, 3], [4, 5]]  # without a budget: line order
    assert plan(DataSummary(lengths={0: 100}), None, 10) == [[0]]   # too long: alone


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("dp")
    tiny.llama().save_pretrained(d / "model")
    tiny.write_jsonl(d / "d.jsonl", ROWS)
    return d


def _cli(world, out, *extra, nproc=1, wrapper=None):
    base = ["--model", str(world / "model"), "--data", str(world / "d.jsonl"), "--out", str(out)]
    if nproc == 1 and wrapper is None:
        cmd = [sys.executable, "-m", "callgraph.cli", "dump"]
    else:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
               "--standalone"] + ([str(wrapper), "dump"] if wrapper else ["-m", "callgraph.cli", "dump"])
    return subprocess.run(cmd + base + ARGS + list(extra), env=ENV, capture_output=True,
                          text=True, timeout=300)


def _dataset(out, fmt):
    f = get_format(fmt)(out)
    return {i: f.read(i) for i in sorted(f.done_ids())}


def _equal(a, b):
    assert sorted(a) == sorted(b) == [r[0] for r in ROWS]
    bad = [i for i in a if not all(torch.equal(a[i][k], b[i][k]) for k in a[i])]
    assert not bad, f"samples differ: {bad}"


@pytest.mark.parametrize("fmt", ["safetensors", "specforge"])
def test_two_gloo_ranks_equal_one_process(world, tmp_path, fmt):
    one = _cli(world, tmp_path / "one", "--format", fmt)
    assert one.returncode == 0, one.stderr
    two = _cli(world, tmp_path / "two", "--format", fmt, nproc=2)
    assert two.returncode == 0, two.stderr
    assert "rank 1 of 2 takes" in two.stderr and "from 2 ranks" in two.stderr
    _equal(_dataset(tmp_path / "one", fmt), _dataset(tmp_path / "two", fmt))
    manifest = json.loads((tmp_path / "two/manifest.json").read_text())
    assert manifest["complete"] and manifest["ranks"] == 2
    assert manifest["samples_written"] == manifest["samples_on_disk"] == len(ROWS)
    assert manifest["fired_paths"] == ["model.layers.1", "model.layers.3", "model.layers.5",
                                       "model.norm"]
    assert main(["dump", "verify", str(tmp_path / "two"), "--data", str(world / "d.jsonl")]) == 0


DIE = r"""
import os, sys
import callgraph.hooks.formats.safetensors_shards as st
real, calls, init = st.atomic_write, [0], st.SafetensorsFormat.__init__
def small_shards(self, *args, **kw):     # a shard of a few samples, so there are several
    init(self, *args, **dict(kw, shard_bytes=3000))
st.SafetensorsFormat.__init__ = small_shards
def dying(path, write):
    calls[0] += 1
    if os.environ.get("RANK") == "1" and calls[0] == 2:
        os.kill(os.getpid(), 9)           # rank 1 is killed after its first shard
    return real(path, write)
st.atomic_write = dying
from callgraph.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_rank_then_one_rank_resumes_to_the_same_dataset(world, tmp_path):
    assert _cli(world, tmp_path / "one").returncode == 0
    wrapper = tmp_path / "die.py"
    wrapper.write_text(DIE)
    killed = _cli(world, tmp_path / "two", nproc=2, wrapper=wrapper)
    assert killed.returncode != 0
    left = get_format("safetensors")(tmp_path / "two").done_ids()
    assert 0 < len(left) < len(ROWS)
    again = _cli(world, tmp_path / "two")           # one rank now, resuming the two-rank run
    assert again.returncode == 0, again.stderr
    assert f"resuming: {len(left)} samples already in" in again.stderr
    _equal(_dataset(tmp_path / "one", "safetensors"), _dataset(tmp_path / "two", "safetensors"))


def test_dry_run_says_the_size_and_writes_nothing(world, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["dump", "--model", str(world / "model"), "--data", str(world / "d.jsonl"),
               "--out", str(out), *ARGS, "--dry-run"])
    text = capsys.readouterr().out
    tokens = sum(len(ids) for _, ids, _ in ROWS)
    assert rc == 0 and not out.exists()
    assert f"samples: {len(ROWS)} (0 on disk already, {len(ROWS)} to do)" in text
    assert f"tokens after truncation: {tokens:,}" in text
    per_token = 4 * tiny.HIDDEN * 4 + 16
    assert f"each token: 3 layers + the final norm x {tiny.HIDDEN} x 4 bytes + 16 = {per_token}" in text
    assert f"safetensors (chosen): {tokens * per_token / 1e6:,.2f} MB" in text


@pytest.fixture(scope="module")
def shardable(tmp_path_factory):
    """A tiny Llama whose heads split in two (4 query, 2 kv heads), saved with real weights."""
    from transformers import LlamaConfig, LlamaForCausalLM
    d = tmp_path_factory.mktemp("tp")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=8,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    LlamaForCausalLM(cfg).save_pretrained(d / "model")
    tiny.write_jsonl(d / "d.jsonl", ROWS)
    return d


def _close(a, b, tol=1e-5):
    assert sorted(a) == sorted(b) == [r[0] for r in ROWS]
    for i in a:
        for k in a[i]:
            x, y = a[i][k], b[i][k]
            same = torch.equal(x, y) if not x.is_floating_point() else \
                (x.shape == y.shape and (x - y).abs().max().item() <= tol)
            assert same, f"sample {i}: {k} differs"


def test_tensor_parallel_groups_write_the_one_process_dataset(shardable, tmp_path):
    """4 gloo ranks, --tp 2: two groups of two ranks, each group shards the model with
    transformers' plan and computes half the plan; one rank a group writes. The dataset equals a
    one-process run's (to fp32 rounding: a sharded matmul sums in another order)."""
    pytest.importorskip("accelerate")   # transformers' tensor-parallel loading needs it
    one = _cli(shardable, tmp_path / "one", "--format", "safetensors")
    assert one.returncode == 0, one.stderr
    four = _cli(shardable, tmp_path / "tp", "--format", "safetensors", "--tp", "2", nproc=4)
    assert four.returncode == 0, four.stderr[-3000:]
    err = four.stderr
    assert "tensor-parallel group 1 of 2, confirms only" in err, err[-3000:]
    assert "tensor-parallel group 0 of 2, writes" in err
    shards = sorted(p.name for p in (tmp_path / "tp").glob("*.safetensors"))
    assert shards and {s.split("-")[1] for s in shards} <= {"000", "002"}, shards  # writers only
    _close(_dataset(tmp_path / "one", "safetensors"), _dataset(tmp_path / "tp", "safetensors"))
    manifest = json.loads((tmp_path / "tp" / "manifest.json").read_text())
    assert manifest["ranks"] == 4 and manifest["tensor_parallel"] == 2
    assert manifest["samples_written"] == len(ROWS)
    # every rank's hooks fired: the four ranks' counts of the norm are summed
    assert manifest["fired"]["model.norm"] == 2 * len(plan_of(shardable))


def plan_of(d):
    from callgraph.hooks.data import scan
    summary = scan(d / "d.jsonl", None, 2048, None)
    return plan(summary, None, 64)


def test_tp_refusals(shardable, tmp_path, capsys):
    base = ["dump", "--model", str(shardable / "model"), "--data", str(shardable / "d.jsonl"),
            "--out", str(tmp_path / "o"), "--device", "cpu", "--tp", "2"]
    assert main(base) == 3   # one process: no group of two
    assert "--tp 2 needs a multiple of 2 processes" in capsys.readouterr().err
    assert main(base + ["--check", "2"]) == 3
    assert "with --tp run `callgraph dump verify" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
