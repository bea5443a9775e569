"""`callgraph dump` checks everything a user can get wrong before the model loads, and resumes
only onto the data and weights it was made from."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.cli import main  # noqa: E402

ROWS = tiny.samples(6, seed=4)


@pytest.fixture
def broken_model(tmp_path):
    """A config that reads, weights that cannot load: an error about anything else came first."""
    d = tmp_path / "model"
    tiny.llama_config().save_pretrained(d)
    (d / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
    return d


def run(capsys, model, data, out, *extra):
    rc = main(["dump", "--model", str(model), "--data", str(data), "--out", str(out),
               "--layers", "1,3,5", "--convention", "output", "--device", "cpu", "--dtype", "fp32",
               *map(str, extra)])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("lines,msg", [
    (['{"input_ids": [1, 2, 64]}'], "d.jsonl:1: token id 64 is outside the model's vocabulary (0..63)"),
    (['{"input_ids": [1, 2]}', '{"input_ids": [1, "a", 3]}'],
     "d.jsonl:2: input_ids must be a list of integers (found 'a')"),
    (['{"input_ids": [1, true]}'], "d.jsonl:1: input_ids must be a list of integers (found True)"),
    (['{"input_ids": [1, 2], "loss_mask": [1, 2]}'], "d.jsonl:1: loss_mask must hold only 0 and 1"),
    (['{"input_ids": [1, 2]}'] * 3 + ['{"input_ids": [1,'], "d.jsonl:4: not JSON"),
    (['[1, 2, 3]'], "d.jsonl:1: expected a JSON object, found list"),
    (["", "  ", ""], "d.jsonl: no samples (the file has no non-blank line)"),
])
def test_bad_data_fails_before_the_model_loads(tmp_path, capsys, broken_model, lines, msg):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(lines) + "\n")
    rc, err = run(capsys, broken_model, data, tmp_path / "out")
    assert rc == 3 and msg in err and "Traceback" not in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()   # nothing written


def test_missing_data_and_out_file(tmp_path, capsys, broken_model):
    rc, err = run(capsys, broken_model, tmp_path / "none.jsonl", tmp_path / "out")
    assert rc == 3 and "none.jsonl: cannot read" in err and not (tmp_path / "out").exists()
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS)
    (tmp_path / "file").write_text("x")
    rc, err = run(capsys, broken_model, data, tmp_path / "file")
    assert rc == 3 and "a file is there, not a folder" in err


def _saved(tmp_path, seed):
    d = tmp_path / "model"
    tiny.llama(seed).save_pretrained(d)
    return d


def test_resume_refuses_other_data(tmp_path, capsys):
    model = _saved(tmp_path, 0)
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS)
    assert run(capsys, model, data, tmp_path / "out")[0] == 0
    other = [(i, [(t + 1) % 60 for t in ids], mask) if i in (1, 4) else (i, ids, mask)
             for i, ids, mask in ROWS]
    tiny.write_jsonl(data, other)
    rc, err = run(capsys, model, data, tmp_path / "out")
    assert rc == 3 and "2 of the 6 samples there were made from other tokens" in err
    assert "(lines 2, 5)" in err
    # more lines after the dumped ones is the same dataset, grown: resumed
    tiny.write_jsonl(data, ROWS + tiny.samples(9, seed=8)[6:])
    rc, err = run(capsys, model, data, tmp_path / "out")
    assert rc == 0 and "resuming: 6 samples already in" in err and "3 to do" in err, err
    assert "wrote 3 samples" in err


def test_resume_refuses_other_weights(tmp_path, capsys):
    model = _saved(tmp_path, 0)
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS[:3])
    assert run(capsys, model, data, tmp_path / "out")[0] == 0
    manifest = json.loads((tmp_path / "out/manifest.json").read_text())
    assert manifest["weights"].startswith("blake2b:") and manifest["data"] == str(data)
    _saved(tmp_path, 1)                      # other weights under the same folder name
    tiny.write_jsonl(data, ROWS)
    rc, err = run(capsys, model, data, tmp_path / "out")
    assert rc == 3 and "was made from other weights" in err
    _saved(tmp_path, 0)                      # the same weights again: resumes
    rc, err = run(capsys, model, data, tmp_path / "out")
    assert rc == 0 and "wrote 3 samples" in err, err


def test_layer_ids_are_checked_against_the_config_before_loading(tmp_path, capsys, broken_model):
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS)
    rc = main(["dump", "--model", str(broken_model), "--data", str(data), "--out",
               str(tmp_path / "out"), "--layers", "1,9", "--convention", "output", "--device", "cpu"])
    err = capsys.readouterr().err
    assert rc == 3 and "output ids run 0..7" in err and not (tmp_path / "out").exists()
