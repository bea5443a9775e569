"""Config reading without the engine: both file formats, typed fields, CLI overrides, paths.

The functional cases (test_gate_cases.py) cover what a user sees; these pin the rules that make
a contract file mean the same thing wherever it is read from.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from callgraph.errors import ConfigError
from callgraph.gate.config import load_config

INI = """
[callgraph]
roots = src
    other
bindings =
    AutoModel.from_config = LlamaModel
unknown = warn
fail_on_drift = yes
max_seconds = 30

[callgraph:contract:flagship]
name = The flagship chain
entry = Kimi
target = DeepseekV2Model
via = general_mm_embed_routine
expect = reached

[callgraph:contract:own-roots]
roots = elsewhere
entry = A
target = B
expect = unreachable
"""

TOML = """
[tool.callgraph]
roots = ["src", "other"]
bindings = {"AutoModel.from_config" = "LlamaModel"}
unknown = "warn"
fail_on_drift = true
max_seconds = 30

[tool.callgraph.contracts.flagship]
name = "The flagship chain"
entry = "Kimi"
target = "DeepseekV2Model"
via = "general_mm_embed_routine"
expect = "reached"

[tool.callgraph.contracts.own-roots]
roots = ["elsewhere"]
entry = "A"
target = "B"
expect = "unreachable"
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def comparable(cfg):
    return (cfg.scope, [(c.id, c.name, c.entries, c.target, c.via, c.expect, c.scope)
                        for c in cfg.contracts], cfg.unknown, cfg.fail_on_drift, cfg.max_seconds)


def test_ini_and_toml_mean_the_same(tmp_path):
    ini = load_config(write(tmp_path / "a", "setup.cfg", INI), cwd=tmp_path)
    toml = load_config(write(tmp_path / "a", "pyproject.toml", TOML), cwd=tmp_path)
    assert comparable(ini) == comparable(toml)
    assert ini.scope.binds == (("AutoModel.from_config", "LlamaModel"),)
    assert [c.id for c in ini.contracts] == ["flagship", "own-roots"]


def test_roots_are_relative_to_the_config_folder(tmp_path):
    cfg = load_config(write(tmp_path / "conf", "gate.cfg", INI), cwd=tmp_path / "elsewhere")
    assert cfg.scope.roots == (str(tmp_path / "conf" / "src"), str(tmp_path / "conf" / "other"))
    own = cfg.contracts[1]
    assert own.scope.roots == (str(tmp_path / "conf" / "elsewhere"),)
    assert own.scope.binds == (), "bindings name classes of the shared tree, not of its own"
    assert cfg.contracts[0].scope == cfg.scope, "a contract inherits what it does not override"


def test_discovery_prefers_setup_cfg_then_pyproject(tmp_path):
    write(tmp_path, "setup.cfg", "[metadata]\nname = x\n")
    write(tmp_path, "pyproject.toml", TOML)
    assert load_config(cwd=tmp_path).source == (tmp_path / "pyproject.toml").resolve()
    write(tmp_path, "setup.cfg", INI)
    assert load_config(cwd=tmp_path).source == (tmp_path / "setup.cfg").resolve()


def test_cli_overrides_the_file(tmp_path):
    path = write(tmp_path, "setup.cfg", INI)
    cfg = load_config(path, cwd=tmp_path, overrides={
        "unknown": "fail", "roots": (str(tmp_path / "cli"),), "format": None, "entries": ()})
    assert cfg.unknown == "fail"
    assert cfg.scope.roots == (str(tmp_path / "cli"),)
    assert cfg.contracts[0].scope.roots == (str(tmp_path / "cli"),)
    assert cfg.contracts[1].scope.roots == (str(tmp_path / "elsewhere"),), "contract keys win"
    assert cfg.format == "text", "None means not given on the command line"


@pytest.mark.parametrize("name, text, message", [
    ("setup.cfg", "[callgraph]\nfail_on_drift = maybe\n",
     "setup.cfg [callgraph] fail_on_drift: expected true or false, got 'maybe'"),
    ("setup.cfg", "[callgraph]\nmax_seconds = -1\n",
     "setup.cfg [callgraph] max_seconds: must be greater than 0"),
    ("setup.cfg", "[callgraph]\nbindings = AutoModel.from_config\n",
     "setup.cfg [callgraph] bindings: expected FACTORY = CLASS, got 'AutoModel.from_config'"),
    ("setup.cfg", "[callgraph:contrat:x]\nentry = A\n",
     "setup.cfg [callgraph:contrat:x]: unknown section"),
    ("setup.cfg", "[callgraph:contract:x]\nentry = A\n  B\ntarget = C\nexpect = reached\n",
     "setup.cfg [callgraph:contract:x] entry: expected one value, got several lines"),
    ("setup.cfg", "[callgraph]\n[callgraph]\n", "cannot parse"),
    ("pyproject.toml", "[tool.callgraph.contracts.x]\nentry = 'A'\ntarget = 'B'\nexpect = true\n",
     "pyproject.toml [tool.callgraph.contracts.x] expect: expected a string, got a boolean"),
    ("pyproject.toml", "[tool.callgraph]\nbindings = ['A=B']\n",
     "pyproject.toml [tool.callgraph] bindings: expected a table"),
    ("pyproject.toml", "[tool.callgraph]\ncontracts = 3\n", "contracts: expected a table"),
    ("pyproject.toml", "[tool.callgraph]\nroots = [\n", "cannot parse"),
])
def test_invalid_values_name_file_section_and_key(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, cwd=tmp_path)
    assert message in str(info.value)


def test_explicit_file_without_a_section_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"no \[callgraph\]"):
        load_config(write(tmp_path, "x.cfg", "[other]\na = 1\n"), cwd=tmp_path)
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.cfg", cwd=tmp_path)


def test_patch_mode_needs_no_file(tmp_path):
    cfg = load_config(None, cwd=tmp_path, required=False)
    assert cfg.source is None and cfg.scope.roots == (str(tmp_path.resolve()),)
