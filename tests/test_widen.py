"""Container values merge past MAX_CONTAINER_VALUES (callgraph/values.py): a bounded set, and
every element each container held is still there to call."""
from __future__ import annotations

import json

from callgraph.cli import main
from callgraph.values import MAX_CONTAINER_VALUES, VExt, VFunc, VSeq, widen_containers


def _dict(**table):
    keys = tuple(sorted((k, frozenset(v)) for k, v in table.items()))
    return VSeq(frozenset().union(*(frozenset(v) for v in table.values())), "dict", None, keys)


def test_few_containers_are_kept_as_they_are():
    vals = frozenset(_dict(a={VFunc(f"m.f{i}")}) for i in range(MAX_CONTAINER_VALUES))
    assert widen_containers(vals) is vals


def test_many_containers_merge_by_kind_keeping_every_element():
    dicts = [_dict(a={VFunc(f"m.f{i}")}, **({"b": {VFunc("m.g")}} if i % 2 else {}))
             for i in range(3 * MAX_CONTAINER_VALUES)]
    tuples = [VSeq(frozenset({VFunc(f"m.t{i}"), VExt("x")}), "tuple",
                   (frozenset({VFunc(f"m.t{i}")}), frozenset({VExt("x")})), None)
              for i in range(MAX_CONTAINER_VALUES)]
    other = VExt("torch.cat")
    got = widen_containers(frozenset(dicts + tuples + [other]))
    merged = {v.kind: v for v in got if isinstance(v, VSeq)}
    assert set(merged) == {"dict", "tuple"} and other in got and len(got) == 3
    keys = dict(merged["dict"].keys)
    assert keys["a"] == frozenset(VFunc(f"m.f{i}") for i in range(3 * MAX_CONTAINER_VALUES))
    assert keys["b"] == {VFunc("m.g")}
    assert merged["tuple"].items[0] == frozenset(VFunc(f"m.t{i}") for i in range(MAX_CONTAINER_VALUES))
    assert merged["tuple"].items[1] == {VExt("x")}


def test_a_name_with_many_dicts_still_calls_each_value(tmp_path, capsys):
    n = 2 * MAX_CONTAINER_VALUES
    src = "".join(f"def f{i}():\n    pass\n\n\n" for i in range(n))
    src += "def make(c):\n" + "".join(f"    {'if' if i == 0 else 'elif'} c == {i}:\n        d = {{'a': f{i}}}\n"
                                       for i in range(n)) + "    return d\n\n\ndef use(c):\n    make(c)['a']()\n"
    (tmp_path / "m.py").write_text(src)
    out = tmp_path / "g.json"
    assert main(["export", "--root", str(tmp_path), "--no-cache", "-o", str(out)]) == 0
    callees = {e["callee"] for e in json.loads(out.read_text())["edges"] if e["caller"] == "m.use"}
    assert callees >= {f"m.f{i}" for i in range(n)}
    for target in ("f0", f"f{n - 1}"):
        assert main(["reach", "use", target, "--root", str(tmp_path), "--no-cache"]) == 0
    capsys.readouterr()


def test_an_export_union_cut_says_so():
    """A parameter's union past EXPORT_UNION_VALUES keeps an unknown for the values cut, so a
    call on it stays unresolved (its row kept) instead of resolving from the values kept only."""
    from callgraph import whole_tree
    from callgraph.values import Ctx, VFunc, VUnknown

    rounds = whole_tree._Rounds()
    many = frozenset(VFunc(f"m.f{i}") for i in range(whole_tree.EXPORT_UNION_VALUES + 44))
    few = frozenset(VFunc(f"m.g{i}") for i in range(3))
    rounds.fold([Ctx("m.callee", (("fn", many), ("other", few)))])
    (ctx,) = rounds.next_contexts(first=True)
    binds = dict(ctx.binds)
    assert len(binds["fn"]) == whole_tree.EXPORT_UNION_VALUES + 1
    assert any(isinstance(v, VUnknown) for v in binds["fn"])
    assert binds["other"] == few  # a union within the bound is kept whole, with no marker
