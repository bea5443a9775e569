"""`--check N` / `check_dump`: a dump is recomputed sample by sample and wrong data is named."""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.hooks.check import check_dump  # noqa: E402
from callgraph.hooks.formats.specforge import sample_path  # noqa: E402

ROWS = tiny.samples(12, seed=5, lo=3, hi=20)


@pytest.mark.parametrize("fmt", ["safetensors", "specforge"])
def test_a_right_dump_passes(tmp_path, fmt):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, format=fmt, batch_size=4)
    report = check_dump(model, tmp_path, 100, tokens=lambda ids: {i: r for i, r, _ in ROWS})
    assert report.checked == [r[0] for r in ROWS] and not report.problems
    assert report.worst < 1e-5 and "all match" in report.summary()


def test_swapped_states_are_named(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, format="specforge", batch_size=4)
    a, b = (torch.load(sample_path(tmp_path, i), weights_only=True) for i in (2, 3))
    n = min(a["input_ids"].shape[0], b["input_ids"].shape[0])
    a["aux_hidden_state"][:, :n] = b["aux_hidden_state"][:, :n]   # sample 3's rows in sample 2
    torch.save(a, sample_path(tmp_path, 2))
    report = check_dump(model, tmp_path, 100)
    assert len(report.problems) == 1 and report.problems[0].startswith("sample 2: row error")
    assert report.worst_id == 2 and report.worst > 0.1


def test_other_tokens_are_named(tmp_path):
    model = tiny.llama()
    tiny.dump(model, ROWS, tmp_path, batch_size=4)
    other = {i: list(r) for i, r, _ in ROWS}
    other[5][0] = (other[5][0] + 1) % 60
    report = check_dump(model, tmp_path, 100, tokens=lambda ids: other)
    assert report.problems == ["sample 5: its input_ids are not those of the data file's line 6"]


def test_cli_check_exit_codes(tmp_path, capsys):
    from callgraph.cli import main

    model_dir = tmp_path / "model"
    tiny.llama().save_pretrained(model_dir)
    data = tiny.write_jsonl(tmp_path / "data.jsonl", ROWS)
    argv = ["dump", "--model", str(model_dir), "--data", str(data), "--layers", "1,3,5",
            "--convention", "output", "--format", "specforge", "--out", str(tmp_path / "out"),
            "--device", "cpu", "--dtype", "fp32", "--check", "5"]
    assert main(argv) == 0
    assert "check: checked 5 samples" in capsys.readouterr().err
    d = torch.load(sample_path(tmp_path / "out", 0), weights_only=True)
    d["hidden_state"] += 1
    torch.save(d, sample_path(tmp_path / "out", 0))
    assert main(argv[:-1] + ["12"]) == 1          # nothing left to dump: only the check runs
    err = capsys.readouterr().err
    assert "check: sample 0: row error" in err and "1 wrong" in err


def test_one_wrong_row_is_caught_in_bf16(tmp_path):
    model = tiny.llama().to(torch.bfloat16)
    tiny.dump(model, ROWS, tmp_path, format="specforge", batch_size=4)
    clean = check_dump(model, tmp_path, 100)
    assert not clean.problems and clean.tolerance == 0.25
    a = torch.load(sample_path(tmp_path, 2), weights_only=True)
    b = torch.load(sample_path(tmp_path, 3), weights_only=True)
    a["hidden_state"][0, 2] = b["hidden_state"][0, 0]     # one row of another sample, of many
    torch.save(a, sample_path(tmp_path, 2))
    report = check_dump(model, tmp_path, 100)
    assert [p.split(":")[0] for p in report.problems] == ["sample 2"]
    assert report.worst > 0.5 > 0.25 > clean.worst
