"""The trainers' formats, read back the way each trainer reads them; resume; crash safety.

The readers below re-implement the few lines of each upstream loader (never imported):
- speculators (vllm-project/speculators c05b95b3): `hs_connectors/src/hs_connectors/transfer.py`
  `FileTransfer.get_cached` / `_load_hs_file`, `src/speculators/train/data.py`
  `ArrowDataset._get_raw_data`, `src/speculators/data_generation/offline.py`
  `check_hidden_states` and `get_existing_hidden_state_indices`; the default layer ids of
  `scripts/launch_vllm.py`. The file content is vLLM's `ExampleHiddenStatesConnector`'s
  (vllm-project/vllm 015a95c8, `[T, layers, H]` stacked in `extract_from_kv_cache`).
- ModelOpt (NVIDIA/Model-Optimizer a2fbac7b): `modelopt/torch/speculative/eagle/utils.py`
  `OfflineSupervisedDataset.__getitem__`, the `rglob("*.pt")` of
  `examples/speculative_decoding/eagle_utils.py`, `default_eagle_aux_layer_ids` of
  `modelopt/torch/speculative/plugins/hf_eagle.py`.
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
from test_hooks_parallel import _cli, _dataset, _equal, world  # noqa: E402,F401  (world: a fixture)

ROWS = tiny.samples(7)
N, H = tiny.N_LAYERS, tiny.HIDDEN


def hf_states(model, rows):
    """{id: (HF output_hidden_states tuple rows, last decoder layer's own output)}."""
    last = {}
    handle = model.model.layers[-1].register_forward_hook(
        lambda m, a, out: last.__setitem__("x", (out[0] if isinstance(out, tuple) else out).detach()))
    out = {}
    try:
        with torch.no_grad():
            for sid, ids, _ in rows:
                hs = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
                out[sid] = ([h[0] for h in hs], last["x"][0].clone())
    finally:
        handle.remove()
    return out


# ---- speculators / vLLM ---------------------------------------------------------------------
def speculators_existing(output_path: Path) -> list[int]:
    """offline.py get_existing_hidden_state_indices: `hs_{i}.safetensors` names, nothing else."""
    found = set()
    for p in output_path.iterdir():
        if p.name.startswith("hs_") and p.name.endswith(".safetensors"):
            try:
                found.add(int(p.stem[3:]))
            except ValueError:
                continue
    return sorted(found)


def speculators_sample(hidden_states_path: Path, file_idx: int, input_ids: list[int]):
    """FileTransfer.get_cached + check_hidden_states + ArrowDataset._get_raw_data."""
    from safetensors.torch import load_file
    path = hidden_states_path / f"hs_{file_idx}.safetensors"
    assert not Path(str(path) + ".lock").exists()
    loaded = load_file(path)
    assert {"token_ids", "hidden_states"} <= loaded.keys()
    assert loaded["token_ids"].tolist() == input_ids
    assert loaded["hidden_states"].shape[0] == len(input_ids)
    assert torch.isfinite(loaded["hidden_states"]).all()
    assert torch.equal(loaded["token_ids"], torch.tensor(input_ids))     # dtype int64 as well
    return {"hidden_states": loaded["hidden_states"][:, :-1].flatten(1),
            "input_ids": loaded["token_ids"],
            "verifier_last_hidden_states": loaded["hidden_states"][:, -1]}


@pytest.mark.parametrize("fmt", ["speculators", "vllm"])
def test_speculators_reads_its_default_layers(tmp_path, fmt):
    """`--layers eagle3` is speculators' default [2, N//2, N-3] plus the last layer N."""
    model = tiny.llama()
    cap = tiny.dump(model, ROWS, tmp_path, "eagle3", None, format=fmt)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    launch_default = [2, N // 2, N - 3, N]                    # scripts/launch_vllm.py
    assert manifest["format"] == "speculators"
    assert manifest["speculators"]["vllm eagle_aux_hidden_state_layer_ids"] == launch_default
    assert manifest["speculators"]["train --target-layer-ids"] == launch_default[:-1]
    assert manifest["layers"]["spellings"]["vLLM eagle_aux_hidden_state_layer_ids"] == launch_default
    assert manifest["output_layer_ids"] == [i - 1 for i in launch_default]
    assert manifest["hidden_state_path"] == f"model.layers.{N - 1}"
    assert cap.selection.output_ids == (1, N // 2 - 1, N - 4, N - 1)
    assert speculators_existing(tmp_path) == [r[0] for r in ROWS]

    refs = hf_states(model, ROWS)
    for sid, ids, mask in ROWS:
        got = speculators_sample(tmp_path, sid, ids)
        hs, last = refs[sid]
        want_aux = torch.cat([hs[i] for i in launch_default[:-1]], -1)   # HF index = vLLM id
        assert got["hidden_states"].shape == (len(ids), 3 * H)
        torch.testing.assert_close(got["hidden_states"], want_aux, rtol=1e-5, atol=1e-5)
        # before the final norm; the trainer applies the verifier's norm itself
        torch.testing.assert_close(got["verifier_last_hidden_states"], last, rtol=1e-5, atol=1e-5)
        normed = model.model.norm(got["verifier_last_hidden_states"][None])[0]
        torch.testing.assert_close(normed, hs[-1], rtol=1e-5, atol=1e-5)
        assert not torch.allclose(got["verifier_last_hidden_states"], hs[-1])
        from safetensors.torch import load_file
        assert load_file(tmp_path / f"hs_{sid}.safetensors")["loss_mask"].tolist() == mask


def test_speculators_keeps_the_model_dtype_and_a_given_last_layer(tmp_path):
    model = tiny.llama().to(torch.bfloat16)
    tiny.dump(model, ROWS[:3], tmp_path, f"1,3,{N - 1}", "output", format="speculators")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["output_layer_ids"] == [1, 3, N - 1]       # not added twice
    from safetensors.torch import load_file
    d = load_file(tmp_path / "hs_0.safetensors")
    assert d["hidden_states"].dtype == torch.bfloat16 and d["hidden_states"].shape[1:] == (3, H)
    assert d["token_ids"].dtype == torch.int64 and d["loss_mask"].dtype == torch.int64


# ---- ModelOpt -------------------------------------------------------------------------------
def modelopt_dataset(offline_data_path: Path):
    """eagle_utils.py: the files; OfflineSupervisedDataset.__getitem__ (answer_only_loss)."""
    dumped_files = [str(p) for p in Path(offline_data_path).rglob("*.pt")]
    items = []
    for f in dumped_files:
        offline_data = torch.load(f, weights_only=True)
        labels = torch.full_like(offline_data["input_ids"], -100)
        labels[..., :-1] = offline_data["input_ids"][..., 1:]
        items.append({
            "input_ids": offline_data["input_ids"],
            "base_model_hidden_states": offline_data["hidden_states"],
            "aux_hidden_states": offline_data["aux_hidden_states"],
            "attention_mask": torch.ones_like(offline_data["input_ids"]),
            "loss_mask": offline_data["loss_mask"].to(offline_data["input_ids"].dtype),
            "labels": labels,
            "base_hidden_prenorm": bool(offline_data.get("hidden_states_prenorm", False)),
            "conversation_id": offline_data["conversation_id"],
        })
    return items


def test_modelopt_reads_its_default_layers(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, "eagle3", None, format="modelopt")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    default = sorted({1, max(0, N // 2 - 1), max(0, N - 4)})      # default_eagle_aux_layer_ids
    assert manifest["modelopt"]["eagle_aux_hidden_state_layer_ids"] == default
    assert manifest["layers"]["spellings"]["ModelOpt eagle_aux_hidden_state_layer_ids"] == default
    items = modelopt_dataset(tmp_path)
    assert sorted(i["conversation_id"] for i in items) == [r[0] for r in ROWS]
    refs = hf_states(model, ROWS)
    for item in items:
        sid, ids, mask = ROWS[item["conversation_id"]]
        hs, _ = refs[sid]
        assert item["input_ids"].tolist() == ids and item["input_ids"].dtype == torch.int64
        assert item["loss_mask"].tolist() == mask
        assert item["base_hidden_prenorm"] is False                # post-norm, as it assumes
        # compute_hidden_states_hf.py: hidden_states[-1], and hidden_states[lid + 1] per layer
        torch.testing.assert_close(item["base_model_hidden_states"], hs[-1], rtol=1e-5, atol=1e-5)
        want_aux = torch.cat([hs[lid + 1] for lid in default], -1)
        torch.testing.assert_close(item["aux_hidden_states"], want_aux, rtol=1e-5, atol=1e-5)


def test_modelopt_audit_names_a_stray_pt_file_its_loader_would_train_on(tmp_path):
    from callgraph.hooks.verify import verify_dump
    tiny.dump(tiny.llama(), ROWS[:3], tmp_path, format="modelopt")
    assert verify_dump(tmp_path, [0, 1, 2]) == []
    (tmp_path / "old").mkdir()
    torch.save({}, tmp_path / "old" / "9.pt")
    torch.save(torch.load(tmp_path / "1.pt", weights_only=True), tmp_path / "2.pt")
    problems = verify_dump(tmp_path, [0, 1, 2])
    assert any(p.startswith("old/9.pt: a .pt file ModelOpt's loader would train on") for p in problems)
    assert any(p.startswith("sample 2: cannot be read back") for p in problems)


def test_speculators_audit_names_a_misnamed_file(tmp_path):
    from callgraph.hooks.verify import verify_dump
    tiny.dump(tiny.llama(), ROWS[:3], tmp_path, format="speculators")
    assert verify_dump(tmp_path, [0, 1, 2]) == []
    (tmp_path / "hs_1.safetensors").replace(tmp_path / "hs_5.safetensors")
    problems = verify_dump(tmp_path, [0, 1, 2])
    assert "hs_5.safetensors: its header says sample 1" in problems
    assert "1 samples of the data file are not on disk: 1" in problems


# ---- resume and crashes ---------------------------------------------------------------------
FILES = {"speculators": "hs_*.safetensors", "modelopt": "*.pt"}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_resume_redoes_only_what_is_missing(tmp_path, fmt):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, format=fmt)
    files = sorted(tmp_path.glob(FILES[fmt]))
    assert len(files) == len(ROWS)
    for f in files[::2]:
        f.unlink()
    before = {p: p.stat().st_mtime_ns for p in files[1::2]}
    cap = tiny.dump(model, ROWS, tmp_path, format=fmt)
    assert cap.stats.samples == len(files[::2])                 # only the lost ones were redone
    assert cap.manifest["samples_on_disk"] == len(ROWS)
    assert {p: p.stat().st_mtime_ns for p in files[1::2]} == before


KILL = r"""
import sys, os
sys.path.insert(0, sys.argv[2])
import hooks_tiny as tiny
import callgraph.hooks.atomic as atomic
import callgraph.hooks.formats.speculators as sp, callgraph.hooks.formats.modelopt as mo
real = atomic.atomic_write
def dying(path, write):
    def half(f):
        f.write(b"x" * 100)
        f.flush()
        os._exit(9)          # the writer is killed mid-file
    return real(path, half)
sp.atomic_write = mo.atomic_write = dying
import torch
mo.atomic_torch_save = lambda path, data: dying(path, lambda f: torch.save(data, f))
tiny.dump(tiny.llama(), tiny.samples(4), sys.argv[1], format=sys.argv[3])
"""


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_killed_writer_leaves_nothing_a_trainer_would_read(tmp_path, fmt):
    here = Path(__file__).parent
    proc = subprocess.run([sys.executable, "-c", KILL, str(tmp_path), str(here), fmt],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    assert list(tmp_path.rglob("*.tmp-*"))                     # a torn temp file exists...
    assert speculators_existing(tmp_path) == [] and modelopt_dataset(tmp_path) == []   # ...unseen
    cap = tiny.dump(tiny.llama(), tiny.samples(4), tmp_path, format=fmt)   # cleans and completes
    assert cap.stats.samples == 4 and not list(tmp_path.rglob("*.tmp-*"))
    assert len(list(tmp_path.glob(FILES[fmt]))) == 4


# ---- data parallel --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", sorted(FILES))
def test_two_gloo_ranks_write_the_dataset_of_one_process(world, tmp_path, fmt):
    """Per-sample files cannot collide across ranks; rank 0's merged manifest keeps the
    format's own entries (the ids its trainer takes)."""
    from callgraph.cli import main
    w = world
    one = _cli(w, tmp_path / "one", "--format", fmt)
    assert one.returncode == 0, one.stderr
    two = _cli(w, tmp_path / "two", "--format", fmt, nproc=2)
    assert two.returncode == 0, two.stderr
    _equal(_dataset(tmp_path / "one", fmt), _dataset(tmp_path / "two", fmt))
    m1, m2 = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("one", "two"))
    assert m2["complete"] and m2["ranks"] == 2 and m2["samples_on_disk"] == len(_dataset(tmp_path / "two", fmt))
    def ids(m):   # the out dir differs, the rest must not
        return {k: v for k, v in m[fmt].items() if "path" not in k}
    assert ids(m2) == ids(m1) and ids(m1)
    assert main(["dump", "verify", str(tmp_path / "two"), "--data", str(w / "d.jsonl")]) == 0
