"""The README's main job prints the same proof on a warm cache as cold (a cached answer used to
lose the class names: `reached: forward → forward`)."""
import re

import pytest

from callgraph.cli import main

ROOT = "fixtures/trees/sglang_mini/python/sglang/srt"


@pytest.mark.parametrize("target,code", [("DeepseekV2Model", 0), ("Qwen2Model", 1)])
def test_cold_and_warm_print_the_same(tmp_path, capsys, target, code):
    argv = ["reach", "KimiK25ForConditionalGeneration", target, "--root", ROOT,
            "--cache-dir", str(tmp_path)]
    runs = []
    for _ in range(2):
        assert main(argv) == code
        runs.append(re.sub(r"\d+\.\d+ s$", "N s", capsys.readouterr().out.strip()))
    assert runs[0] == runs[1]
    assert "KimiK25ForConditionalGeneration.forward" in runs[1].splitlines()[0]
    assert f"{target}.forward" in runs[1].splitlines()[0]


def test_a_warm_answer_parses_no_module(tmp_path, capsys, monkeypatch):
    """A cached answer prints its class names from the record (`classes`), without parsing
    the modules its names live in (three of SGLang's, deepseek_v2.py among them, took 0.26 s
    of a 0.45 s warm run)."""
    from callgraph.index.project import Project

    argv = ["reach", "KimiK25ForConditionalGeneration", "DeepseekV2Model", "--root", ROOT,
            "--cache-dir", str(tmp_path)]
    assert main(argv) == 0
    cold = capsys.readouterr().out
    loaded = []
    real = Project.load
    monkeypatch.setattr(Project, "load", lambda self, path, *a, **k: loaded.append(path) or real(self, path, *a, **k))
    assert main(argv) == 0
    warm = capsys.readouterr().out
    assert loaded == []
    assert re.sub(r"\d+\.\d+ s$", "", warm.strip()) == re.sub(r"\d+\.\d+ s$", "", cold.strip())
