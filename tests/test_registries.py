"""Registries read as data (callgraph/registries/) and --model-config: the tables, the config's
sub-config matching, ENTRY taken from the config's architecture, and the errors a user can make."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from callgraph.cli import main
from callgraph.errors import ModelConfigError
from callgraph.registries import read_model_config
from callgraph.registries.literals import read_tables

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "trees"
SGLANG = TREES / "registry_sglang"
HF = TREES / "registry_hf"


def test_tables_read_as_transformers_and_vllm_write_them():
    tree = ast.parse(
        "from collections import OrderedDict\n"
        "A = OrderedDict([('llama', 'LlamaModel'), ('pair', ('X', 'Y')), ('bad', f'{x}')])\n"
        "A.update({'gpt2': 'GPT2Model'})\n"
        "B = OrderedDict(**{'gpt-sw3': 'GPT2Config'}, **A)\n"
        "_T = {'DeepseekV2ForCausalLM': ('deepseek_v2', 'DeepseekV2ForCausalLM')}\n"
        "_M = {**_T, 'Qwen2ForCausalLM': ('qwen2', 'Qwen2ForCausalLM')}\n")
    tables = read_tables(tree)
    assert tables["A"] == {"llama": ("LlamaModel",), "pair": ("X", "Y"), "gpt2": ("GPT2Model",)}
    assert list(tables["B"]) == ["gpt-sw3", "llama", "pair", "gpt2"]
    assert tables["_M"]["DeepseekV2ForCausalLM"] == ("deepseek_v2", "DeepseekV2ForCausalLM")
    assert set(tables["_M"]) == {"DeepseekV2ForCausalLM", "Qwen2ForCausalLM"}


def test_a_factory_argument_matches_the_sub_configs_ending_with_its_attributes(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "outer", "architectures": ["Outer"],
        "text_config": {"model_type": "llama", "architectures": ["LlamaForCausalLM"]},
        "thinker_config": {"text_config": {"model_type": "qwen2"}, "vision_config": {"model_type": "siglip"}}}))
    cfg = read_model_config(tmp_path)  # the folder holding config.json
    assert cfg.model_types(("text_config",)) == ("llama", "qwen2")
    assert cfg.model_types(("thinker_config", "text_config")) == ("qwen2",)
    assert cfg.model_types(("audio_config",)) is None
    assert set(cfg.model_types(())) == {"outer", "llama", "qwen2", "siglip"}  # a bare `config`: any
    assert cfg.architectures(()) == ("Outer",)
    assert cfg.architectures(("text_config",)) == ("LlamaForCausalLM",)


@pytest.mark.parametrize("content, message", [(None, "no config.json there"), ("{nope", "not JSON"),
                                              ("[1]", "expected a JSON object")])
def test_a_bad_model_config_is_one_line_and_exit_3(tmp_path, capsys, content, message):
    if content is not None:
        (tmp_path / "config.json").write_text(content)
    with pytest.raises(ModelConfigError, match=message):
        read_model_config(tmp_path)
    code = main(["reach", "LlavaForConditionalGeneration", "LlamaModel", "--root", str(HF),
                 "--model-config", str(tmp_path), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 3 and message in err and "Traceback" not in err


def test_entry_defaults_to_the_configs_architecture(capsys):
    code = main(["reach", "DeepseekV2Model", "--root", str(SGLANG / "sglang" / "srt"),
                 "--model-config", str(SGLANG / "kimi-config.json"), "--json", "--no-cache"])
    proof = json.loads(capsys.readouterr().out)
    assert code == 0 and proof["entry"] == "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"
    assert proof["path"][-1]["callee"] == "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward"


def test_entry_may_be_left_out_only_with_a_model_config(capsys):
    code = main(["reach", "DeepseekV2Model", "--root", str(SGLANG / "sglang" / "srt"), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 3 and "ENTRY may be left out with --model-config" in err


def test_a_config_without_architectures_names_no_entry(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llava"}))
    code = main(["reach", "LlamaModel", "--root", str(HF), "--model-config", str(tmp_path), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 3 and "no `architectures`" in err


def test_a_tree_without_registries_rejects_a_model_config(capsys):
    code = main(["reach", "a", "b", "--root", str(TREES / "empty"), "--model-config", str(HF / "llava-config.json"),
                 "--no-cache"])
    err = capsys.readouterr().err
    assert code == 3, err


def test_registry_edges_carry_their_key_in_callees(capsys):
    code = main(["callees", "LlavaModel.__init__", "--root", str(HF), "--model-config", str(HF / "llava-config.json"),
                 "--json", "--no-cache"])
    view = json.loads(capsys.readouterr().out)
    assert code == 0
    keys = {(e["callee"].rsplit(".", 2)[-2], e.get("key")) for e in view["edges"] if e["rule"] == "registry"}
    assert keys == {("LlamaModel", "text_config.model_type=llama"),
                    ("CLIPVisionModel", "vision_config.model_type=clip_vision_model")}


def test_a_model_config_changes_the_cached_answer(tmp_path, capsys):
    argv = ["reach", "LlavaForConditionalGeneration", "CLIPVisionModel", "--root", str(HF), "--cache-dir", str(tmp_path)]
    assert main(argv) == 2
    assert main(argv + ["--model-config", str(HF / "llava-config.json")]) == 0
    assert main(argv) == 2
    capsys.readouterr()


def test_the_gate_reads_model_config_shared_and_per_contract(tmp_path, capsys):
    """`model_config` in [tool.callgraph] and in a contract, relative to the config's folder."""
    (tmp_path / "pyproject.toml").write_text(f'''
[tool.callgraph]
roots = ["{HF}"]
model_config = "{HF / 'llava-config.json'}"

[tool.callgraph.contracts.vision]
entry = "LlavaForConditionalGeneration"
target = "CLIPVisionModel"
expect = "reached"

[tool.callgraph.contracts.unconfigured]
entry = "LlavaForConditionalGeneration"
target = "LlamaModel"
expect = "reached"
roots = ["{HF}"]
''')
    code = main(["check", "--config", str(tmp_path / "pyproject.toml"), "--no-cache"])
    out = capsys.readouterr().out
    # unknown exits 2; the contract on its own roots does not inherit the shared model config
    assert code == 2, out
    assert "KEPT     vision" in out and "UNKNOWN  unconfigured" in out
    assert "text_config.model_type decides what AutoModel.from_config builds" in out


def test_unknown_lists_the_keys_that_would_reach(capsys):
    """Without a config the answer says which keys of the table reach the target, in text and
    as the proof's `conditions`."""
    argv = ["reach", "KimiK25ForConditionalGeneration", "Qwen2Model", "--root", str(TREES / "registry_vllm"), "--no-cache"]
    assert main(argv + ["--json"]) == 2
    proof = json.loads(capsys.readouterr().out)
    assert proof["conditions"] == [{"site": "vllm/model_executor/models/kimi_k25.py:15:26",
                                    "factory": "init_vllm_registered_model", "key": "text_config.architectures",
                                    "reaching": ["Qwen2ForCausalLM"], "complete": True}]
    assert main(argv) == 2
    assert ("reached if text_config.architectures is one of: Qwen2ForCausalLM (init_vllm_registered_model at "
            "vllm/model_executor/models/kimi_k25.py:15:26); pass --model-config or --bind") in capsys.readouterr().out


def test_conditions_name_only_keys_proven_to_reach(capsys):
    """Either Llava tower reaches LlamaModel only if its model_type is llama (the table's one key
    whose class is, or names, LlamaModel): clip_vision_model and llava are not listed."""
    assert main(["reach", "LlavaForConditionalGeneration", "LlamaModel", "--root", str(HF), "--json", "--no-cache"]) == 2
    got = {c["key"]: c["reaching"] for c in json.loads(capsys.readouterr().out)["conditions"]}
    assert got == {"text_config.model_type": ["llama"], "vision_config.model_type": ["llama"]}


def test_export_records_registry_edges_with_their_key(tmp_path, capsys):
    out = tmp_path / "graph.json"
    assert main(["export", "--root", str(HF), "--model-config", str(HF / "llava-config.json"), "-o", str(out),
                 "--no-cache"]) == 0
    capsys.readouterr()
    edges = json.loads(out.read_text())["edges"]
    assert {(e["callee"], e["key"]) for e in edges if e["rule"] == "registry"} == {
        ("transformers.models.llama.modeling_llama.LlamaModel.__init__", "text_config.model_type=llama"),
        ("transformers.models.clip.modeling_clip.CLIPVisionModel.__init__",
         "vision_config.model_type=clip_vision_model")}


@pytest.mark.real
def test_sglang_entry_from_the_checkpoint_config(upstream, analysis_cache, capsys):
    """The issue's own line: `reach --model-config ./Kimi-K2.5/ DeepseekV2Model --root .../srt`.
    kimi_k25.py:988 declares `EntryClass = [KimiK25ForConditionalGeneration]` (read as data), so the
    entry is its forward and the proof is the flagship's."""
    tree = upstream("sglang==0.5.23")
    config = Path(__file__).parent / "real_cases" / "configs" / "kimi_k25.json"
    code = main(["reach", "DeepseekV2Model", "--root", str(tree / "sglang/srt"), "--model-config", str(config),
                 "--json", "--cache-dir", str(analysis_cache)])
    proof = json.loads(capsys.readouterr().out)
    assert code == 0, proof["unresolved"]
    assert proof["entry"] == "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"
    assert [h["callee"] for h in proof["path"]] == [
        "sglang.srt.managers.mm_utils.general_mm_embed_routine",
        "sglang.srt.models.deepseek_v2.DeepseekV2ForCausalLM.forward",
        "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward"]
