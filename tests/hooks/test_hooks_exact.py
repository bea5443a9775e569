"""Exactness: every written sample equals that sample's own states from an independent forward.

The reference runs each sample alone (batch of one, no padding) with plain forward hooks on the
chosen decoder layers and the final norm; nothing of `callgraph.hooks` is used to compute it or
to read the dump back (specforge and modelopt files by `torch.load`, safetensors shards through
`index.json` and the safetensors library, speculators / vllm files by `load_file` split as
speculators' `ArrowDataset` splits them). Many mixed-length samples, batch sizes 1, 3 and 8, shard sizes
that close shards in the middle of a batch, a resume after the process was killed, and both
grad modes a caller may run under (`callgraph dump` itself uses `torch.inference_mode()`).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

LAYERS = (1, 3, 5)
ROWS = tiny.samples(48, seed=3, lo=2, hi=30)
TOL = 1e-5
DEVICES = ["cpu", pytest.param("cuda", marks=[
    pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")])]
MODES = {"inference_mode": torch.inference_mode, "no_grad": torch.no_grad}
# bytes a token takes in a shard's hidden states: 3 aux layers + the final norm, H floats each
TOKEN_BYTES = (len(LAYERS) + 1) * tiny.HIDDEN * 4
# (format, shard bytes): shards of ~1 and ~5 short samples close in the middle of a batch
CASES = [("specforge", None), ("safetensors", None),
         ("safetensors", 6 * TOKEN_BYTES), ("safetensors", 40 * TOKEN_BYTES),
         ("speculators", None), ("modelopt", None)]
STACKED = ("speculators", "vllm")   # hold the last layer's output before the norm, not after


def reference(model, rows, device):
    """{id: (aux [T, 3H], final [T, H], last [T, H])} from one-sample forwards with plain hooks
    (last: the last decoder layer's own output, before the final norm)."""
    seen = {}

    def keep(key):
        def hook(module, args, output):
            out = output[0] if isinstance(output, tuple) else output
            seen[key] = out.detach().to("cpu", torch.float32).clone()
        return hook

    inner = model.model
    handles = [inner.layers[i].register_forward_hook(keep(i)) for i in LAYERS]
    handles.append(inner.norm.register_forward_hook(keep("norm")))
    handles.append(inner.layers[-1].register_forward_hook(keep("last")))
    out = {}
    try:
        with torch.no_grad():
            for sid, ids, _ in rows:
                seen.clear()
                model(input_ids=torch.tensor([ids], device=device))
                out[sid] = (torch.cat([seen[i][0] for i in LAYERS], -1), seen["norm"][0],
                            seen["last"][0])
    finally:
        for h in handles:
            h.remove()
    return out


def read_back(out_dir: Path, fmt: str) -> dict:
    """{id: (input_ids, loss_mask, aux, final)} read without callgraph's own readers."""
    out = {}
    if fmt == "specforge":
        for path in out_dir.glob("rows_*/data_*.ckpt"):
            d = torch.load(path, weights_only=True)
            sid = int(path.stem.split("_")[1])
            out[sid] = (d["input_ids"], d["loss_mask"], d["aux_hidden_state"][0], d["hidden_state"][0])
        return out
    if fmt == "modelopt":   # OfflineSupervisedDataset: every *.pt below the folder, torch.load
        for path in out_dir.rglob("*.pt"):
            d = torch.load(path, weights_only=True)
            assert int(path.stem) == d["conversation_id"]
            out[d["conversation_id"]] = (d["input_ids"], d["loss_mask"], d["aux_hidden_states"],
                                         d["hidden_states"])
        return out
    if fmt in STACKED:      # speculators' FileTransfer + ArrowDataset._get_raw_data
        from safetensors.torch import load_file
        for path in out_dir.glob("hs_*.safetensors"):
            d = load_file(str(path))
            hs = d["hidden_states"]
            out[int(path.stem[3:])] = (d["token_ids"], d["loss_mask"], hs[:, :-1].flatten(1), hs[:, -1])
        return out
    from safetensors import safe_open
    index = json.loads((out_dir / "index.json").read_text())["samples"]
    for sid, e in index.items():
        lo, hi = e["offset"], e["offset"] + e["length"]
        with safe_open(str(out_dir / e["shard"]), framework="pt") as f:
            got = [f.get_slice(k)[lo:hi] for k in
                   ("input_ids", "loss_mask", "aux_hidden_state", "hidden_state")]
        out[int(sid)] = tuple(got)
    return out


def assert_exact(out_dir: Path, fmt: str, rows, refs) -> None:
    got = read_back(out_dir, fmt)
    assert sorted(got) == sorted(sid for sid, _, _ in rows), "a sample is missing or extra"
    wrong = []
    for sid, ids, mask in rows:
        input_ids, loss_mask, aux, final = got[sid]
        assert input_ids.tolist() == ids and loss_mask.tolist() == mask, f"sample {sid}: tokens"
        want_aux, want_final, want_last = refs[sid]
        if fmt in STACKED:
            want_final = want_last
        err = max((aux.float() - want_aux).abs().max().item(),
                  (final.float() - want_final).abs().max().item())
        if err > TOL:
            wrong.append((sid, err))
    assert not wrong, f"{len(wrong)}/{len(rows)} samples differ from their own forward: {wrong[:8]}"


def run_dump(model, rows, out_dir, fmt, shard, batch_size, mode, device):
    """The Python API loop of docs/hooks.md, over right-padded batches."""
    from callgraph.hooks import Capture
    from callgraph.hooks.data import batches

    opts = {"shard_bytes": shard} if shard else {}
    with Capture(model, ",".join(map(str, LAYERS)), "output", out_dir=out_dir, format=fmt,
                 format_options=opts) as cap:
        todo = [r for r in rows if r[0] not in cap.done_ids]
        with MODES[mode]():
            for b in batches(todo, batch_size):
                with cap.batch(b.ids, b.input_ids, b.loss_mask, b.lengths):
                    model(input_ids=b.input_ids.to(device), attention_mask=b.attention_mask.to(device))
    return cap


@pytest.fixture(scope="module", params=DEVICES)
def live(request):
    model = tiny.llama().to(request.param)
    return model, request.param, reference(model, ROWS, request.param)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("batch_size", [1, 3, 8])
@pytest.mark.parametrize("fmt,shard", CASES)
def test_every_sample_is_its_own(tmp_path, live, fmt, shard, batch_size, mode):
    model, device, refs = live
    cap = run_dump(model, ROWS, tmp_path, fmt, shard, batch_size, mode, device)
    assert cap.stats.samples == len(ROWS)
    if shard:   # the shard size really cut the run into many shards
        assert len(list(tmp_path.glob("shard-*.safetensors"))) > 4
    assert_exact(tmp_path, fmt, ROWS, refs)


KILLED = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import test_hooks_exact as t, hooks_tiny as tiny
import callgraph.hooks.formats.specforge as sf, callgraph.hooks.formats.safetensors_shards as st
import callgraph.hooks.formats.speculators as sp, callgraph.hooks.formats.modelopt as mo
real, calls = st.atomic_write, [0]
def dying(path, write):
    calls[0] += 1
    if calls[0] == int(sys.argv[5]):
        os._exit(9)                       # killed between two files: some are whole, some not yet
    return real(path, write)
sf.atomic_write = st.atomic_write = sp.atomic_write = mo.atomic_write = dying
import torch
sf.atomic_torch_save = mo.atomic_torch_save = lambda path, data: dying(path, lambda f: torch.save(data, f))
shard = int(sys.argv[4]) or None
t.run_dump(tiny.llama(), t.ROWS, sys.argv[2], sys.argv[3], shard, 3, "inference_mode", "cpu")
"""


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("fmt,shard,die_at", [("specforge", None, 20),
                                             ("safetensors", 40 * TOKEN_BYTES, 4),
                                             ("speculators", None, 20), ("modelopt", None, 20)])
def test_resume_after_a_kill_is_exact(tmp_path, fmt, shard, die_at, mode):
    here = Path(__file__).parent
    proc = subprocess.run([sys.executable, "-c", KILLED, str(here), str(tmp_path), fmt,
                           str(shard or 0), str(die_at)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    before = len(read_back_partial(tmp_path, fmt))
    assert 0 < before < len(ROWS)
    model = tiny.llama()
    cap = run_dump(model, ROWS, tmp_path, fmt, shard, 8, mode, "cpu")
    assert cap.stats.samples == len(ROWS) - before
    assert_exact(tmp_path, fmt, ROWS, reference(model, ROWS, "cpu"))


def read_back_partial(out_dir: Path, fmt: str) -> list:
    """What a killed run left whole: specforge files, or the samples listed in shard headers."""
    if fmt == "specforge":
        return list(out_dir.glob("rows_*/data_*.ckpt"))
    if fmt == "modelopt":
        return list(out_dir.glob("*.pt"))
    if fmt in STACKED:
        return list(out_dir.glob("hs_*.safetensors"))
    from callgraph.hooks.formats.safetensors_shards import read_header
    return [s for p in out_dir.glob("shard-*.safetensors")
            for s in json.loads(read_header(p)["__metadata__"]["samples"])]


def test_cli_dump_is_exact(tmp_path, capsys):
    """`callgraph dump` as a user runs it (inference mode), on a saved model, every format."""
    from transformers import AutoModelForCausalLM

    from callgraph.cli import main
    from callgraph.hooks.choices import FORMAT_NAMES

    model_dir = tmp_path / "model"
    tiny.llama().save_pretrained(model_dir)
    data = tiny.write_jsonl(tmp_path / "data.jsonl", ROWS)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    refs = reference(model, ROWS, "cpu")
    for fmt in FORMAT_NAMES:
        out = tmp_path / fmt
        argv = ["dump", "--model", str(model_dir), "--data", str(data), "--layers", "1,3,5",
                "--convention", "output", "--format", fmt, "--out", str(out), "--batch-size", "8",
                "--device", "cpu", "--dtype", "fp32"]
        if fmt == "safetensors":
            argv += ["--shard-mb", "1"]
        assert main(argv) == 0, capsys.readouterr().err
        assert_exact(out, fmt, ROWS, refs)
