"""`reach --arg NAME=TYPE`: the entry's parameters typed by the user, the premise shown."""
import json
from pathlib import Path

import pytest

from callgraph.cli import main

ROOT = str(Path(__file__).resolve().parent.parent / "fixtures" / "trees" / "typed_kwargs")
BASE = ["reach", "tk.layers.attention", "tk.hooks.Target.forward", "--root", ROOT]
TENSORS = ["--arg", "mask=torch.Tensor", "--arg", "position_ids=torch.Tensor"]


def test_untyped_parameters_stay_open(tmp_path, capsys):
    """`attention(x, mask=None, position_ids=None, ...)` calls `mask.view(-1)`: with nothing said
    of `mask`, it may be a `Reshaper`, whose `view` reaches the target."""
    assert main(BASE + ["--cache-dir", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "mask.view(...)" in out and "assuming" not in out


def test_typed_parameters_prove_it_and_say_so(tmp_path, capsys):
    assert main(BASE + TENSORS + ["--cache-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("unreachable:")
    assert "assuming the entry's mask: torch.Tensor; position_ids: torch.Tensor (--arg)" in out
    assert main(BASE + TENSORS + ["--json", "--no-cache"]) == 1
    proof = json.loads(capsys.readouterr().out)
    assert proof["verdict"] == "unreachable"
    assert proof["assumptions"] == ["mask: torch.Tensor", "position_ids: torch.Tensor"]


def test_the_premise_is_part_of_the_cache_key(tmp_path, capsys):
    """A warm cache answers each question with its own premise: the typed answer never serves
    the untyped question, nor the reverse."""
    cache = ["--cache-dir", str(tmp_path)]
    assert main(BASE + TENSORS + cache) == 1
    assert main(BASE + cache) == 2
    assert main(BASE + TENSORS + cache) == 1
    out = capsys.readouterr().out
    assert out.count("assuming the entry's") == 2


def test_an_in_tree_class_by_its_dotted_name_names_its_subclasses(capsys):
    """`--arg hook=tk.hooks.Hook` (not imported by hooks.run_hook's module under that name):
    any subclass of Hook, so `hook.run(x)` may run `Tracer.run`, which reaches the target."""
    argv = ["reach", "tk.hooks.run_hook", "tk.hooks.Target.forward", "--root", ROOT, "--no-cache"]
    assert main(argv + ["--arg", "hook=tk.hooks.Hook"]) == 0
    out = capsys.readouterr().out
    assert "Tracer.run" in out and "assuming the entry's hook: tk.hooks.Hook" in out


@pytest.mark.parametrize("args,message", [
    (["--arg", "nope=int"], "has no parameter 'nope'"),
    (["--arg", "mask"], "expected NAME=TYPE"),
    (["--arg", "mask=torch.("], "is not a type expression"),
    (["--arg", "mask=Nonexistent"], "names nothing tk.layers can see"),
])
def test_bad_arguments_are_one_line_and_exit_3(args, message, tmp_path, capsys):
    assert main(BASE + args + ["--cache-dir", str(tmp_path)]) == 3
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_the_methods_own_instance_is_not_an_argument(capsys):
    argv = ["reach", "tk.layers.Layer.forward", "tk.hooks.Target.forward", "--root", ROOT, "--no-cache",
            "--arg", "self=int"]
    assert main(argv) == 3
    assert "the method's own instance" in capsys.readouterr().err
