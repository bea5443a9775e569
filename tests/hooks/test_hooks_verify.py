"""`callgraph dump verify OUT`: a clean dump passes; each kind of damage is one named line, exit 1."""
import json
import struct

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.cli import main  # noqa: E402
from callgraph.hooks.formats.specforge import sample_path  # noqa: E402
from callgraph.hooks.verify import verify_dump  # noqa: E402

ROWS = tiny.samples(9, seed=2, lo=3, hi=15)
IDS = [r[0] for r in ROWS]


def _dump(tmp_path, fmt, **kw):
    tiny.dump(tiny.llama(), ROWS, tmp_path, format=fmt, batch_size=4, **kw)
    return tmp_path


@pytest.mark.parametrize("fmt", ["safetensors", "specforge"])
def test_a_clean_dump_is_clean(tmp_path, fmt, capsys):
    _dump(tmp_path / "d", fmt, format_options={"shard_bytes": 3000} if fmt == "safetensors" else {})
    assert verify_dump(tmp_path / "d", IDS) == []
    data = tiny.write_jsonl(tmp_path / "data.jsonl", ROWS)
    assert main(["dump", "verify", str(tmp_path / "d"), "--data", str(data)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"verify: {tmp_path / 'd'}: clean ({fmt}" in captured.err


def test_missing_extra_and_incomplete(tmp_path):
    d = _dump(tmp_path, "specforge")
    sample_path(d, 3).unlink()
    manifest = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps(dict(manifest, complete=False)))
    problems = verify_dump(d, IDS[:-2] + [100])
    assert "2 samples of the data file are not on disk: 3, 100" in problems
    assert "2 samples on disk are not in the data file: 7, 8" in problems
    assert any(p.startswith("manifest.json: the dump did not finish") for p in problems)
    assert len(problems) == 3


def test_bad_records_are_named(tmp_path):
    d = _dump(tmp_path, "specforge")
    rec = torch.load(sample_path(d, 1), weights_only=True)
    torch.save(dict(rec, hidden_state=rec["hidden_state"].double()), sample_path(d, 1))
    rec = torch.load(sample_path(d, 2), weights_only=True)
    rec["aux_hidden_state"][0, 0, 0] = float("inf")
    torch.save(rec, sample_path(d, 2))
    sample_path(d, 4).write_bytes(b"not a torch file")
    problems = verify_dump(d, IDS)
    assert f"sample 1: hidden_state is [1, {len(ROWS[1][1])}, 16] float64, expected " \
           f"[1, {len(ROWS[1][1])}, 16] float32" in problems
    assert "sample 2: aux_hidden_state holds NaN or Inf" in problems
    assert any(p.startswith("sample 4: cannot be read back (UnpicklingError") for p in problems)
    assert len(problems) == 3


def test_shards_and_index(tmp_path, capsys):
    d = _dump(tmp_path, "safetensors", format_options={"shard_bytes": 3000})
    shards = sorted(d.glob("shard-*.safetensors"))
    assert len(shards) >= 3
    shards[0].write_bytes(struct.pack("<Q", 5) + b"{oops")          # a torn header
    index = json.loads((d / "index.json").read_text())
    index["samples"]["99"] = index["samples"]["8"]
    (d / "index.json").write_text(json.dumps(index))
    problems = verify_dump(d)
    assert problems[0].startswith(f"{shards[0].name}: unreadable header (JSONDecodeError")
    assert problems[1].startswith("index.json disagrees with the shards:")
    assert "listed but in no shard [" in problems[1]
    assert len(problems) == 2
    assert main(["dump", "verify", str(d)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{d}: {p}" for p in problems]


def test_not_a_dump_is_a_usage_error(tmp_path, capsys):
    assert main(["dump", "verify", str(tmp_path)]) == 3
    assert "no manifest" in capsys.readouterr().err
    assert main(["dump", "verify", str(tmp_path), "--check", "3"]) == 3   # --check needs --model
