"""Abstract values: the order `ordered` gives, and contexts as memo keys."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

from callgraph.index.project import Project
from callgraph.values import (Ctx, VClass, VConst, VExt, VFunc, VInst, VSeq, VSeqMethod, VUnknown, ordered,
                                    stable_key)
from callgraph.roots import find_roots

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "trees"

# Values that tie on kind and name, and differ only inside frozensets of strings (whose
# iteration order follows string hashes, so differs between processes).
_PROGRAM = """
import json
from callgraph.values import *
names = [f"ext.n{i}" for i in range(12)]
seqs = [VSeq(frozenset(VExt(n) for n in names[i:i + 4]), "list") for i in range(8)]
insts = [VInst("m.Wrapper", True, (("model", frozenset({VExt(a), VExt(b)})),)) for a, b in zip(names, names[3:])]
funcs = [VFunc("m.f", VInst("m.A", True, (("x", frozenset({VExt(n)})),))) for n in names[:5]]
vals = frozenset(seqs + insts + funcs + [VSeqMethod(s, "get") for s in seqs] + [VConst("a"), VConst(None), VClass("m.B")])
print(json.dumps([repr(stable_key(v)) for v in ordered(vals)]))
"""


def _ordered_in_process(seed: str) -> list[str]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_ordered_is_the_same_whatever_the_string_hashes():
    runs = [_ordered_in_process(seed) for seed in ("1", "2", "3")]
    assert len(runs[0]) == 33
    assert runs[0] == runs[1] == runs[2]
    # and it is a real order: sorted by the stable key wherever cheap keys tie
    assert len(set(runs[0])) == len(runs[0])


def test_ordered_sorts_by_kind_and_name_first():
    vals = {VUnknown("z"), VExt("torch.cat"), VClass("a.B"), VClass("a.A"), VInst("a.A")}
    assert ordered(vals) == [VClass("a.A"), VClass("a.B"), VExt("torch.cat"), VInst("a.A"), VUnknown("z")]
    assert ordered(frozenset()) == [] and ordered({VExt("x")}) == [VExt("x")]


def test_ctx_compares_hashes_and_pickles_by_value():
    binds = (("x", frozenset({VExt("t"), VInst("m.A")})),)
    a = Ctx("m.f", binds, Ctx("m.outer"))
    b = Ctx("m.f", tuple((n, frozenset(v)) for n, v in binds), Ctx("m.outer"))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Ctx("m.f", binds) and a != Ctx("m.g", binds, Ctx("m.outer")) and a != "m.f"
    assert a.get("x") == binds[0][1] and a.get("y") is None
    back = pickle.loads(pickle.dumps(a))
    assert back == a and hash(back) == hash(a) and back.closure == Ctx("m.outer")
    assert repr(a).startswith("Ctx(fn='m.f', binds=")


def _project(tree: str) -> Project:
    return Project(find_roots([str(FIXTURES / tree)], None))


def test_subclass_candidates_from_trees_match_the_text_scan():
    """After load_all, class headers come from the parsed trees instead of a regex pass over
    the texts: the candidate files must be the same on every fixture tree."""
    for tree in ("sglang_mini", "hf_mini"):
        by_text, by_tree = _project(tree), _project(tree)
        by_tree.load_all()
        assert by_tree._loaded_all and not by_text._loaded_all
        bases = sorted({b.id if hasattr(b, "id") else getattr(b, "attr", "")
                        for info in by_tree.classes.values() for b in info.node.bases} - {""})
        assert bases, tree
        for base in bases:
            for methods in (("forward",), ("__init__", "forward"), ("__call__",)):
                want = [p.resolve() for p in by_text.subclass_candidates(base, methods)]
                assert [p.resolve() for p in by_tree.subclass_candidates(base, methods)] == want, (tree, base, methods)
        assert by_text._texts is not None and by_tree._texts is None  # the tree route read no text


_SEED_PROGRAM = """
import os, sys
print("seed", os.environ.get("PYTHONHASHSEED"), flush=True)
sys.argv = ["callgraph", "--version"]
from callgraph.cli import entry
entry()
"""


def _cli_run(env_seed: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    if env_seed is not None:
        env["PYTHONHASHSEED"] = env_seed
    out = subprocess.run([sys.executable, "-c", _SEED_PROGRAM], env=env, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_the_command_line_runs_under_a_fixed_hash_seed():
    """entry() re-runs the same command line under PYTHONHASHSEED=0 (the value order and so
    the results at depth limits follow string hashes), once, and keeps a seed the user set."""
    lines = _cli_run(None)
    assert lines[:2] == ["seed None", "seed 0"] and lines[2].startswith("callgraph, version")
    assert _cli_run("7")[:2] == ["seed 7", lines[2]]
    assert _cli_run("random")[0] == "seed random" and len(_cli_run("random")) == 2


_HASH_PROGRAM = """
from callgraph.values import *
vals = [VConst(None), VConst("a"), VFunc("m.f"), VFunc("m.g", VInst("m.A"), Ctx("m.outer")), VSeq(frozenset()),
        VSeq(frozenset({VExt("x")}), "dict", None, ((None, frozenset({VConst(None)})), ("k", frozenset()))),
        VSeqMethod(VSeq(frozenset()), "get"), Ctx("m.f"), Ctx("m.f", (("x", frozenset({NONE})),), Ctx("m.o"))]
print([hash(v) for v in vals])
print([repr(v) for v in frozenset(vals[:7])])
"""


def test_values_hash_alike_in_every_process():
    """Under one string hash seed, a value hashes the same in every process, None inside it
    or not (hash(None) is an address before Python 3.12), so sets of values iterate alike."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    runs = {subprocess.run([sys.executable, "-c", _HASH_PROGRAM], env=env, capture_output=True, text=True,
                           check=True).stdout for _ in range(3)}
    assert len(runs) == 1, runs


def test_same_layout_is_equality_that_also_iterates_alike():
    """The return memo shares one object per equal answer (Evaluator._shared) only where the
    two iterate alike at every level: a loop over either then meets the values in one order."""
    from callgraph.values import same_layout

    def seq(*elems):
        return VSeq(frozenset(elems), "dict", None, (("k", frozenset(elems)),))

    # two equal sets whose elements collide in the table iterate in insertion order
    a, b = frozenset([1, 9]), frozenset([9, 1])
    assert a == b and list(a) != list(b)
    assert not same_layout(a, b)
    assert not same_layout(frozenset({VConst("x"), VSeq(a)}), frozenset({VConst("x"), VSeq(b)}))
    assert not same_layout(Ctx("f", (("x", a),)), Ctx("f", (("x", b),)))
    # rebuilt, not shared: equal and alike
    x = frozenset({seq(VInst("m.A"), VClass("m.B")), VFunc("m.f", VInst("m.A"), Ctx("m.g"))})
    y = frozenset({seq(VInst("m.A"), VClass("m.B")), VFunc("m.f", VInst("m.A"), Ctx("m.g"))})
    assert x is not y and same_layout(x, y)
    assert not same_layout(x, frozenset({seq(VInst("m.A")), VFunc("m.f", VInst("m.A"), Ctx("m.g"))}))
    assert not same_layout(VInst("m.A"), VClass("m.A"))
