"""`callgraph dump` end to end on a tiny local model directory."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.cli import main  # noqa: E402
from callgraph.hooks import load_index, read_sample  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("llama")
    tiny.llama_config().save_pretrained(d)
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {w: i for i, w in enumerate(["<unk>", "hello", "world", "the", "model"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(d)
    return d


def run(capsys, *args):
    rc = main(["dump", *map(str, args)])
    return rc, capsys.readouterr().err


def test_dump_pretokenized_and_text_lines(tmp_path, model_dir, capsys):
    data = tiny.write_jsonl(tmp_path / "d.jsonl", tiny.samples(4))
    with open(data, "a") as f:
        f.write(json.dumps({"text": "hello the world model"}) + "\n")
    out = tmp_path / "out"
    rc, err = run(capsys, "--model", model_dir, "--random-init", "--data", data, "--out", out,
                  "--layers", "2,4,6", "--convention", "input", "--device", "cpu", "--dtype", "fp32",
                  "--batch-size", "2")
    assert rc == 0, err
    assert "outputs of decoder layers [1,3,5]" in err and "inputs of layers [2,4,6]" in err
    assert "wrote 5 samples" in err
    index = load_index(out)
    assert sorted(index) == [0, 1, 2, 3, 4]
    assert read_sample(out, 4)["input_ids"].tolist() == [1, 3, 2, 4]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["convention"] == "input" and manifest["target_path"] == "model"
    first = {k: manifest[k] for k in ("fired", "fired_paths", "adapters")}
    assert first["fired_paths"] == ["model.layers.1", "model.layers.3", "model.layers.5", "model.norm"]
    again = ["--model", model_dir, "--random-init", "--data", data, "--out", out,
             "--layers", "2,4,6", "--convention", "input", "--device", "cpu", "--dtype", "fp32"]
    rc, err = run(capsys, *again)
    assert rc == 0 and "resuming: 5 samples" in err
    assert "nothing left to do: all 5 samples are already in" in err and "model.layers.1" in err, err
    # a resume that had nothing to run keeps what the first run confirmed (it used to write
    # fired: {} and adapters: {} over it, and the dump check then chose adapters afresh)
    manifest = json.loads((out / "manifest.json").read_text())
    assert {k: manifest[k] for k in first} == first and manifest["complete"] is True
    assert manifest["samples_written"] == 0 and manifest["samples_on_disk"] == 5
    assert "earlier_runs" not in manifest
    with open(data, "a") as f:   # one more line: the resume runs one forward, counts add up
        f.write(json.dumps({"input_ids": [5, 6, 7]}) + "\n")
    rc, err = run(capsys, *again)
    assert rc == 0 and "wrote 1 samples" in err, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["fired_paths"] == first["fired_paths"] and manifest["adapters"] == first["adapters"]
    assert all(manifest["fired"][p] > first["fired"][p] for p in first["fired_paths"])
    assert manifest["samples_on_disk"] == 6


@pytest.mark.parametrize("extra,msg", [
    (["--layers", "1,2"], "needs --convention"),
    (["--proof", "{proof}"], "proof/live mismatch"),
    (["--target-class", "NoSuchModel"], "no module of class NoSuchModel"),
])
def test_user_errors_are_one_line_exit_3(tmp_path, model_dir, capsys, extra, msg):
    data = tiny.write_jsonl(tmp_path / "d.jsonl", tiny.samples(2))
    proof = tmp_path / "proof.json"
    proof.write_text(tiny.proof("LlamaForCausalLM", "DeepseekV2Model", ("model",)).dumps())
    extra = [e.replace("{proof}", str(proof)) for e in extra]
    rc, err = run(capsys, "--model", model_dir, "--random-init", "--data", data,
                  "--out", tmp_path / "o", "--device", "cpu", *extra)
    assert rc == 3
    last = err.splitlines()[-1]
    assert last.startswith("callgraph: error:") and msg in last and "Traceback" not in err


def test_bad_data_line_names_file_and_line(tmp_path, model_dir, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text('{"input_ids": [1, 2]}\n{"nope": 1}\n')
    rc, err = run(capsys, "--model", model_dir, "--random-init", "--data", data,
                  "--out", tmp_path / "o", "--device", "cpu")
    assert rc == 3 and f"{data}:2" in err


def test_without_torch_help_works_and_dump_says_what_is_missing(tmp_path):
    import subprocess
    import sys
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ModuleNotFoundError('no torch', name='torch')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    help_ = subprocess.run([sys.executable, "-m", "callgraph.cli", "--help"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and "dump" in help_.stdout
    run_ = subprocess.run([sys.executable, "-m", "callgraph.cli", "dump", "--model", "m",
                           "--data", "d", "--out", "o"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert run_.returncode == 3
    assert "needs the dump extra (torch)" in run_.stderr and "Traceback" not in run_.stderr
