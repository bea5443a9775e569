"""Formats on disk: layout, keys, shapes, dtypes; resume; crash safety; NaN policy."""
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

from callgraph.hooks import load_index, read_sample  # noqa: E402
from callgraph.hooks.formats.safetensors_shards import read_header  # noqa: E402
from callgraph.hooks.manifest import ResumeMismatch  # noqa: E402
from callgraph.hooks.writer import NonFiniteSample  # noqa: E402

ROWS = tiny.samples(7)
H = tiny.HIDDEN


def test_specforge_layout_keys_shapes_dtypes(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, "eagle3", None, format="specforge")
    files = sorted(tmp_path.glob("rows_*/data_*.ckpt"))
    assert [f.relative_to(tmp_path).as_posix() for f in files][:2] == [
        "rows_0-2000/data_0.ckpt", "rows_0-2000/data_1.ckpt"]
    assert len(files) == len(ROWS)
    refs = tiny.reference(model, ROWS)
    for sid, ids, mask in ROWS:
        d = torch.load(tmp_path / f"rows_0-2000/data_{sid}.ckpt", weights_only=True)
        assert set(d) == {"input_ids", "loss_mask", "hidden_state", "aux_hidden_state"}
        t = len(ids)
        assert d["input_ids"].dtype == torch.int64 and d["input_ids"].shape == (t,)
        assert d["loss_mask"].dtype == torch.int64 and d["loss_mask"].tolist() == mask
        assert d["hidden_state"].shape == (1, t, H)
        assert d["aux_hidden_state"].shape == (1, t, 3 * H)
        assert torch.equal(d["aux_hidden_state"][0, :, H:2 * H], refs[sid][3 + 1])  # layer 3
        assert torch.equal(d["hidden_state"][0], refs[sid][-1])
    # each file holds only its own sample, not the batch buffer it was a view of
    assert max(f.stat().st_size for f in files) < 12 * 4 * H * 4 + 4096


def test_specforge_group_dirs(tmp_path):
    from callgraph.hooks.formats.specforge import sample_path
    assert sample_path(tmp_path, 4001).relative_to(tmp_path).as_posix() == "rows_4000-6000/data_4001.ckpt"


def test_safetensors_shards_index_and_random_access(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, "1,3,5", "output", format_options={"shard_bytes": 2000})
    shards = sorted(tmp_path.glob("shard-*.safetensors"))
    assert len(shards) > 1
    index = load_index(tmp_path)
    assert {k: v["length"] for k, v in index.items()} == {sid: len(ids) for sid, ids, _ in ROWS}
    from safetensors.torch import load_file
    for shard in shards:   # the shard is plain safetensors, readable by the library itself
        whole = load_file(str(shard))
        listed = json.loads(read_header(shard)["__metadata__"]["samples"])
        assert whole["input_ids"].shape[0] == sum(n for _, _, n in listed)
        for sid, off, n in listed:
            one = read_sample(tmp_path, sid, index)
            assert torch.equal(one["aux_hidden_state"][0], whole["aux_hidden_state"][off:off + n])
            assert one["hidden_state"].shape == (1, n, H)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["complete"] and manifest["hidden_size"] == H and manifest["dtype"] == "float32"


@pytest.mark.parametrize("fmt", ["specforge", "safetensors"])
def test_resume_after_deleting_half(tmp_path, fmt):
    model = tiny.llama()
    opts = {"shard_bytes": 1500} if fmt == "safetensors" else {}
    tiny.dump(model, ROWS, tmp_path, format=fmt, format_options=opts)
    if fmt == "specforge":
        files = sorted(tmp_path.glob("rows_*/*.ckpt"))
    else:
        files = sorted(tmp_path.glob("shard-*.safetensors"))
    for f in files[::2]:
        f.unlink()
    before = {p: p.stat().st_mtime_ns for p in files[1::2]}
    cap = tiny.dump(model, ROWS, tmp_path, format=fmt, format_options=opts)
    assert 0 < cap.stats.samples < len(ROWS)            # only the lost ones were redone
    assert cap.manifest["samples_on_disk"] == len(ROWS)
    assert {p: p.stat().st_mtime_ns for p in files[1::2]} == before
    if fmt == "safetensors":
        assert sorted(load_index(tmp_path)) == [r[0] for r in ROWS]
    else:
        assert len(list(tmp_path.glob("rows_*/*.ckpt"))) == len(ROWS)


def test_resume_refuses_other_settings(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS[:2], tmp_path, "1,3,5", "output")
    with pytest.raises(ResumeMismatch, match="output_layer_ids"):
        tiny.dump(model, ROWS[:2], tmp_path, "1,3,5", "input")


KILL = r"""
import sys, os, torch
sys.path.insert(0, sys.argv[2])
import hooks_tiny as tiny
import callgraph.hooks.atomic as atomic
real = atomic.atomic_write
def dying(path, write):
    def half(f):
        f.write(b"x" * 100)
        f.flush()
        os._exit(9)          # the writer is killed mid-file
    return real(path, half)
atomic.atomic_write = dying
import callgraph.hooks.formats.specforge as sf, callgraph.hooks.formats.safetensors_shards as st
sf.atomic_write = st.atomic_write = dying
tiny.dump(tiny.llama(), tiny.samples(4), sys.argv[1], format=sys.argv[3])
"""


@pytest.mark.parametrize("fmt", ["specforge", "safetensors"])
def test_killed_writer_leaves_no_partial_file(tmp_path, fmt):
    here = Path(__file__).parent
    proc = subprocess.run([sys.executable, "-c", KILL, str(tmp_path), str(here), fmt],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    finals = list(tmp_path.rglob("*.ckpt")) + list(tmp_path.rglob("*.safetensors"))
    assert finals == []                                   # only a temp file, never a final name
    assert list(tmp_path.rglob("*.tmp-*"))
    tiny.dump(tiny.llama(), tiny.samples(4), tmp_path, format=fmt)   # a rerun cleans and completes
    assert not list(tmp_path.rglob("*.tmp-*"))
    for f in tmp_path.rglob("*.ckpt"):
        torch.load(f, weights_only=True)


def _poison(model, sample_pos):
    """Make one row of the batch NaN at layer 3's output."""
    def hook(m, a, out):
        out = out.clone()
        out[sample_pos, 0, 0] = float("nan")
        return out
    return model.model.layers[3].register_forward_hook(hook)


def test_nan_fails_by_default_naming_the_sample(tmp_path):
    model = tiny.llama()
    _poison(model, 1)
    with pytest.raises(NonFiniteSample, match=r"sample 1 has NaN/Inf.*--on-nan skip"):
        tiny.dump(model, ROWS[:3], tmp_path, "1,3", "output")


def test_nan_skip_reports_the_sample(tmp_path):
    model = tiny.llama()
    _poison(model, 1)
    warned = []
    cap = tiny.dump(model, ROWS[:3], tmp_path, "1,3", "output", on_nan="skip", warn=warned.append)
    assert cap.manifest["nan_skipped"] == [1]
    assert sorted(load_index(tmp_path)) == [0, 2]
    assert "sample 1" in warned[0]


def test_resume_refuses_a_dump_of_a_release_known_to_write_wrong_data(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS[:2], tmp_path)
    path = tmp_path / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps(dict(manifest, tool_version="0.1.0")))
    with pytest.raises(ResumeMismatch, match="0.1.0's safetensors format wrote other samples"):
        tiny.dump(model, ROWS, tmp_path)
    path.write_text(json.dumps(dict(manifest, tool_version="0.1.0", format="specforge")))
    with pytest.raises(ResumeMismatch, match="format: 'specforge' there"):   # the usual check
        tiny.dump(model, ROWS, tmp_path)


@pytest.mark.parametrize("fmt", ["specforge", "modelopt"])
def test_a_full_disk_is_one_line_exit_3(tmp_path, fmt, monkeypatch, capsys):
    """torch.save says a failed write with a RuntimeError; on a full disk it is ENOSPC, exit 3."""
    import callgraph.hooks.atomic as atomic
    from callgraph.cli import main

    def full(obj, f, *a, **kw):
        f.write(b"PK")
        raise RuntimeError("[enforce fail at inline_container.cc:664] . PytorchStreamWriter "
                           "failed writing file data/0: file write failed")
    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr(atomic, "_free_bytes", lambda folder: 0)
    model_dir = tmp_path / "model"
    tiny.llama_config().save_pretrained(model_dir)
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS[:3])
    rc = main(["dump", "--model", str(model_dir), "--random-init", "--data", str(data), "--out",
               str(tmp_path / "out"), "--format", fmt, "--device", "cpu", "--layers", "1,3,5",
               "--convention", "output"])
    err = capsys.readouterr().err
    assert rc == 3 and "no space left on device" in err.splitlines()[-1].lower(), err
    assert "Traceback" not in err and "internal error" not in err
    assert not list((tmp_path / "out").rglob("*.pt")) and not list((tmp_path / "out").rglob("*.ckpt"))
