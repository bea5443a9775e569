"""Issue 16, conventions a user expects: every analysing command reads the project's
`[tool.callgraph]` / `[callgraph]` settings as `check` does, command-line values override them,
`root` is a likely typo of `roots`, names and --bind factories that match nothing say so, and
--root with --package says what it does."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from callgraph.cli import main

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "trees"
SRT = TREES / "sglang_mini" / "python" / "sglang" / "srt"
KIMI = "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"

COMMANDS = {  # argv without any tree option, and the exit code on the sglang_mini tree
    "reach": (["reach", "KimiK25ForConditionalGeneration", "DeepseekV2Model", "--no-cache"], 0),
    "graph": (["graph", "KimiK25ForConditionalGeneration", "-o", "OUT/g.dot", "--no-cache"], 0),
    "callers": (["callers", "DeepseekV2Model", "--no-cache"], 0),
    "callees": (["callees", "KimiK25ForConditionalGeneration", "--no-cache"], 0),
    "export": (["export", "-o", "OUT/g.json", "--no-cache"], 0),
}


def _argv(name, tmp_path):
    argv, code = COMMANDS[name]
    return [a.replace("OUT", str(tmp_path)) for a in argv], code


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder whose config names the sglang_mini tree; the working folder."""
    folder = tmp_path / "proj"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("kind", ["pyproject", "setup.cfg"])
def test_every_command_reads_the_project_settings(name, kind, project, tmp_path, capsys):
    if kind == "pyproject":
        (project / "pyproject.toml").write_text(f'[tool.callgraph]\nroots = ["{SRT}"]\n')
    else:
        (project / "setup.cfg").write_text(f"[callgraph]\nroots = {SRT}\n")
    argv, code = _argv(name, tmp_path)
    assert main(argv) == code, capsys.readouterr().err
    assert "settings from" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_command_line_overrides_the_settings(name, project, tmp_path, capsys):
    """The config names the tree with Kimi; --root names one without it, and replaces it."""
    (project / "setup.cfg").write_text(f"[callgraph]\nroots = {SRT}\n")
    argv, code = _argv(name, tmp_path)
    got = main(argv + ["--root", str(TREES / "hf_mini")])
    if name == "export":
        assert got == 0
        names = {n["name"] for n in json.loads((tmp_path / "g.json").read_text())["nodes"]}
        assert names and not any(n.startswith("sglang.") for n in names)
    else:
        assert got == 3 and "matches no function" in capsys.readouterr().err


def test_relative_roots_are_read_from_the_config_folder(project, capsys):
    (project / "pyproject.toml").write_text(f'[tool.callgraph]\nroots = ["{os.path.relpath(SRT, project)}"]\n')
    assert main(["callees", "KimiK25ForConditionalGeneration", "--no-cache"]) == 0
    assert "sglang.srt.managers.mm_utils.general_mm_embed_routine" in capsys.readouterr().out


def test_root_singular_is_a_typo_of_roots(project, capsys):
    (project / "setup.cfg").write_text(f"[callgraph]\nroot = {SRT}\n")
    assert main(["callees", "KimiK25ForConditionalGeneration", "--no-cache"]) == 3
    err = capsys.readouterr().err
    assert "root: unknown key (did you mean roots?" in err and "Traceback" not in err


def test_settings_bindings_and_a_misspelt_factory(project, capsys):
    """A bind whose factory no call names can never apply: a warning for the queries..."""
    (project / "setup.cfg").write_text(
        f"[callgraph]\nroots = {SRT}\nbindings = AutoModle.from_config = Qwen2Model\n"
        "[callgraph:contract:k]\nentry = KimiK25ForConditionalGeneration\n"
        "target = DeepseekV2Model\nexpect = reached\n")
    assert main(["reach", "KimiK25ForConditionalGeneration", "DeepseekV2Model", "--no-cache"]) == 0
    assert ("warning: --bind AutoModle.from_config: no call site in the tree calls "
            "AutoModle.from_config (misspelt?)") in capsys.readouterr().err
    # ...and an error in the gate, which must not pass on a bind that never applied
    assert main(["check", "--no-cache"]) == 3
    assert "bindings AutoModle.from_config: no call site in the tree calls it" in capsys.readouterr().err


def test_a_factory_that_is_called_is_no_warning(capsys):
    assert main(["callees", "KimiK25ForConditionalGeneration", "--root", str(SRT), "--no-cache",
                 "--bind", "make_pp_layers=DeepseekV2DecoderLayer"]) == 0
    assert "misspelt" not in capsys.readouterr().err


def test_names_that_match_nothing_get_the_closest_qualified_names(capsys):
    for typo, want in [("Qwen2Modle", "sglang.srt.models.qwen2.Qwen2Model"),
                       ("Qwen2Model.forwrd", "sglang.srt.models.qwen2.Qwen2Model.forward")]:
        assert main(["reach", "KimiK25ForConditionalGeneration", typo, "--root", str(SRT), "--no-cache"]) == 3
        err = capsys.readouterr().err
        assert f"did you mean {want}" in err, err
    assert main(["callees", "Zzzqqq", "--root", str(SRT), "--no-cache"]) == 3
    assert "did you mean" not in capsys.readouterr().err  # nothing close: no guess


def test_root_and_package_together_are_one_tree_and_say_so(capsys):
    assert main(["callees", "KimiK25ForConditionalGeneration", "--root", str(SRT), "--package", "json",
                 "--no-cache", "--json"]) == 0
    got = capsys.readouterr()
    assert "analysing package json together with" in got.err
    assert json.loads(got.out)["entry"] == KIMI
    assert main(["reach", "KimiK25ForConditionalGeneration", "json.dumps", "--root", str(SRT),
                 "--package", "json", "--no-cache"]) in (1, 2)  # a name of the package resolves


def test_model_config_from_the_settings_reaches_the_analysis(project, monkeypatch, capsys):
    """`model_config` is read like the other keys (relative to the config's folder), and
    `--model-config` would override it; the analysis receives the path."""
    from callgraph import api

    got = {}

    class Recording(api.Analysis):
        def __init__(self, *args, model_config=None, **kwargs):
            got["model_config"] = model_config
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(api, "Analysis", Recording)
    (project / "setup.cfg").write_text(f"[callgraph]\nroots = {SRT}\nmodel_config = ckpt/config.json\n")
    assert main(["callees", "KimiK25ForConditionalGeneration", "--no-cache"]) == 0
    assert got["model_config"] == project / "ckpt" / "config.json"
