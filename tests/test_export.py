"""`export` formats (read back and compared), graph queries on a GraphView, and the `export`,
`callers` and `callees` commands on the small SGLang-shaped fixture tree."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgraph import graphquery as gq
from callgraph.cli import main
from callgraph.errors import NameNotFound
from callgraph.model import GraphView, Hop, Node, Unresolved
from callgraph.output import formats
from callgraph.output.pycg import pycg_adjacency

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "trees" / "sglang_mini" / "python" / "sglang" / "srt"
MM = "sglang.srt.managers.mm_utils.general_mm_embed_routine"
KIMI = "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"
DS_MODEL = "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward"


def _view() -> GraphView:
    """a -> b -> c, a -> c (two sites), d -> c; e alone; one unresolved site in b."""
    h = lambda a, b, line, rule="direct", via=(): Hop(a, b, f"m.py:{line}:4", f"{b}(x)", rule, via)  # noqa: E731
    return GraphView(
        root=("/src",), entry="", tool_version="0.1.0",
        nodes=tuple(Node(q, "m.py", i + 1) for i, q in enumerate(["m.a", "m.b", "m.c", "m.d", "m.e"])),
        edges=(h("m.a", "m.b", 2), h("m.a", "m.c", 3, "module-call", ("init-attribute", "mro")), h("m.a", "m.c", 4),
               h("m.b", "m.c", 7), h("m.d", "m.c", 9)),
        unresolved=(Unresolved("m.b", "m.py:8:4", "f()", "parameter 'f' unbound"),))


def _canon(view: GraphView):
    return (sorted(view.nodes, key=lambda n: n.name), sorted(view.edges, key=lambda e: (e.caller, e.site)),
            sorted(view.unresolved, key=lambda u: u.site), view.root, view.entry, view.tool_version)


def test_json_round_trip():
    view = _view()
    assert _canon(formats.view_from_json(json.loads(formats.render(view, "json")))) == _canon(view)


def test_graphml_round_trip(tmp_path):
    view = _view()
    out = formats.write_graph(view, tmp_path / "g.graphml", "graphml")
    assert _canon(formats.read_graphml(out)) == _canon(view)


def test_dot_round_trip(tmp_path):
    pydot = pytest.importorskip("pydot")
    view = _view()
    (graph,) = pydot.graph_from_dot_data(formats.render(view, "dot"))
    uq = lambda s: s.strip('"')  # noqa: E731
    nodes = {uq(n.get_name()) for n in graph.get_nodes() if uq(n.get_name()) not in ("node", "edge", "graph")}
    edges = sorted((uq(e.get_source()), uq(e.get_destination()), uq(e.get("site")), uq(e.get("rule")))
                   for e in graph.get_edges())
    assert nodes == {n.name for n in view.nodes}
    assert edges == sorted((e.caller, e.callee, e.site, e.rule) for e in view.edges)


def test_pycg_round_trip_and_names(tmp_path):
    (tmp_path / "main.py").write_text("def f():\n    g = lambda: 1\n    h = lambda: 2\n    return h()\n")
    view = GraphView(root=(str(tmp_path),), entry="", tool_version="t",
                     nodes=(Node("main.f", "main.py", 1), Node("main.f.<lambda:3:8>", "main.py", 3)),
                     edges=(Hop("main.f", "main.f.<lambda:3:8>", "main.py:4:11", "h()", "direct"),
                            Hop("main.<module>", "builtins.print", "main.py:9:0", "print()", "direct"),
                            Hop("main.<module>", "builtins.str.join", "main.py:10:0", "s.join()", "external")))
    adj = json.loads(formats.render(view, "pycg"))
    assert adj == {"main": ["<**PyStr**>.join", "<builtin>.print"], "<builtin>.print": [], "<**PyStr**>.join": [],
                   "main.f": ["main.f.<lambda2>"], "main.f.<lambda2>": []}
    assert pycg_adjacency(view) == adj


def test_write_is_atomic_and_checks_the_folder(tmp_path):
    out = tmp_path / "g.json"
    out.write_text("old")
    formats.write_graph(_view(), out, "json")
    assert json.loads(out.read_text())["edges"]
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]  # no temp file left
    with pytest.raises(formats.FormatError):
        formats.write_graph(_view(), tmp_path / "missing" / "g.json", "json")
    with pytest.raises(formats.FormatError):
        formats.render(_view(), "svg")


def test_graph_queries():
    view = _view()
    assert gq.callers(view, "m.c") == ["m.a", "m.b", "m.d"]
    assert gq.callers(view, "m.c", depth=1) == ["m.a", "m.b", "m.d"]
    assert gq.callers(view, "m.b", depth=1) == ["m.a"]
    assert gq.callers(view, "m.c", entries_only=True) == ["m.a", "m.d"]
    paths = gq.witness_paths(view, "m.c")
    assert [h.callee for h in paths["m.a"]] == ["m.c"] and paths["m.a"][0].site == "m.py:3:4"
    assert gq.reachable(view, "m.a") == {"m.a", "m.b", "m.c"}
    assert gq.reachable(view, "m.a", depth=0) == {"m.a"}
    assert [h.callee for h in gq.path(view, "m.a", "m.c")] == ["m.c"]
    assert gq.path(view, "m.c", "m.a") is None
    sub = gq.callers_view(view, "m.c")
    assert sub.entry == "m.c" and {n.name for n in sub.nodes} == {"m.a", "m.b", "m.c", "m.d"}
    assert [u.caller for u in sub.unresolved] == ["m.b"]
    with pytest.raises(NameNotFound):
        gq.callers(view, "m.zzz")


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_export_command(fmt, tmp_path, capsys):
    out = tmp_path / f"g.{fmt}"
    assert main(["export", "--root", str(ROOT), "--format", fmt, "-o", str(out), "--no-cache"]) == 0
    assert "wrote" in capsys.readouterr().err
    text = out.read_text()
    if fmt == "json":
        view = formats.view_from_json(json.loads(text))
        assert any(e.caller == KIMI and e.callee == MM for e in view.edges)
        assert all(e.site and e.rule for e in view.edges)
    elif fmt == "pycg":
        assert MM in json.loads(text)[KIMI]
    elif fmt == "graphml":
        assert any(e.caller == KIMI for e in formats.read_graphml(out).edges)
    else:
        assert text.startswith("digraph")


def test_export_format_from_the_suffix(tmp_path, capsys):
    """Issue 16: `export -o x.svg` wrote JSON into x.svg. The suffix picks the format, a
    picture suffix is refused before any analysis, and so is a suffix that names none."""
    assert main(["export", "--root", str(ROOT), "-o", str(tmp_path / "g.dot"), "--no-cache"]) == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert main(["export", "--root", str(ROOT), "-o", str(tmp_path / "g.graphml"), "--no-cache"]) == 0
    assert any(e.caller == KIMI for e in formats.read_graphml(tmp_path / "g.graphml").edges)
    capsys.readouterr()
    for bad in ("g.svg", "g.txt"):
        assert main(["export", "--root", str(tmp_path / "absent"), "-o", str(tmp_path / bad)]) == 3
        err = capsys.readouterr().err  # the format is refused first: the root is never looked at
        assert err.count("\n") == 1 and "does not exist" not in err and not (tmp_path / bad).exists()
    assert main(["export", "--root", str(ROOT), "--format", "pycg", "-o", str(tmp_path / "g.txt"),
                 "--no-cache"]) == 0  # an explicit --format takes any suffix but a picture's
    assert MM in json.loads((tmp_path / "g.txt").read_text())[KIMI]
    assert main(["export", "--root", str(ROOT), "--format", "dot", "-o", str(tmp_path / "g.png")]) == 3
    assert "not a png picture; draw one with `callgraph graph ENTRY -o g.png`" in capsys.readouterr().err


def test_export_errors_exit_3(tmp_path, capsys):
    assert main(["export", "--root", str(ROOT), "-o", str(tmp_path / "no" / "g.json")]) == 3
    assert main(["export", "--root", str(tmp_path / "absent"), "-o", str(tmp_path / "g.json")]) == 3
    assert "error" in capsys.readouterr().err


def test_callers_command(capsys):
    assert main(["callers", "DeepseekV2Model", "--root", str(ROOT), "--no-cache", "--paths"]) == 0
    out = capsys.readouterr().out
    assert KIMI in out.splitlines() and "→" in out
    assert main(["callers", "DeepseekV2Model", "--root", str(ROOT), "--no-cache", "--entries-only", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["entry"] == DS_MODEL and KIMI in {n["name"] for n in data["nodes"]}
    assert {"caller", "callee", "site", "rule"} <= set(data["edges"][0])


QWEN2_MODEL = "sglang.srt.models.qwen2.Qwen2Model.forward"


def test_callers_never_shows_an_unproven_path_unlabelled(capsys):
    """Issue 16: `callers Qwen2Model --paths` listed Kimi with a 3-hop path through the shared
    helper, while `reach` (and the contract kimi-not-qwen2) says Kimi never gets there. The
    whole-tree graph is context-insensitive: every output says so, and --verify asks reach."""
    assert main(["reach", "KimiK25ForConditionalGeneration", "Qwen2Model", "--root", str(ROOT),
                 "--no-cache"]) == 1
    capsys.readouterr()
    assert main(["callers", "Qwen2Model", "--root", str(ROOT), "--no-cache", "--paths"]) == 0
    got = capsys.readouterr()
    assert KIMI in got.out.splitlines()  # the over-approximation itself...
    assert "over-approximation" in got.out.splitlines()[0]  # ...labelled where the paths are
    assert "over-approximation" in got.err
    assert main(["callers", "Qwen2Model", "--root", str(ROOT), "--no-cache", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["precision"] == "context-insensitive" and "over-approximation" in data["note"]

    assert main(["callers", "Qwen2Model", "--root", str(ROOT), "--no-cache", "--paths", "--verify"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"{KIMI}   [unreachable]" in out
    kimi = out.index(f"{KIMI}   [unreachable]")
    assert not out[kimi + 1].startswith("  →")  # no path printed for what reach refutes
    vl = "sglang.srt.models.qwen2_vl.Qwen2VLForConditionalGeneration.forward"
    assert f"{vl}   [reached]" in out and "over-approximation" not in "\n".join(out)
    assert main(["callers", "Qwen2Model", "--root", str(ROOT), "--no-cache", "--verify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdicts"][KIMI] == "unreachable" and data["verdicts"][vl] == "reached"


def test_callees_command(capsys):
    assert main(["callees", "KimiK25ForConditionalGeneration", "--root", str(ROOT), "--no-cache"]) == 0
    assert DS_MODEL in capsys.readouterr().out.splitlines()
    assert main(["callees", "KimiK25ForConditionalGeneration", "--root", str(ROOT), "--no-cache",
                 "--depth", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["entry"] == KIMI and all(e["caller"] == KIMI for e in data["edges"])
    assert main(["callees", "NoSuchThing", "--root", str(ROOT), "--no-cache"]) == 3


def _adjacency(tmp_path) -> dict:
    """PyCG's adjacency of the whole-tree export of the files written under tmp_path."""
    from callgraph.api import Analysis

    return pycg_adjacency(Analysis(roots=[str(tmp_path)], use_cache=False, warn=lambda m: None).export())


def test_external_callee_names(tmp_path):
    """Calls into code outside the roots are recorded by import name: a method of an external
    class's instance by the class (`Cls.fun`), the external base's `__init__` of an in-tree class
    without one, a builtin container's methods (but not the stores `append`/`update`)."""
    (tmp_path / "main.py").write_text(
        "from ext import Cls, Base, make\n"
        "class Child(Base):\n    pass\n"
        "def run(f):\n    f()\n"
        "def main():\n"
        "    a = Cls()\n    a.fun()\n    run(a.other)\n    make().chained()\n    Child()\n"
        "    d = {}\n    d.update({})\n    d.items()\n")
    adj = _adjacency(tmp_path)
    assert set(adj["main.main"]) == {"ext.Cls", "ext.Cls.fun", "main.run", "ext.make", "ext.Base.__init__",
                                     "<**PyDict**>.items"}
    assert adj["main.run"] == ["ext.Cls.other"]


def test_export_hands_functions_down_more_than_one_call(tmp_path):
    """`main` passes `apply` to `twice`, which passes `leaf` to it: `apply`'s parameter is bound
    by a caller that is itself resolved with its callers' arguments (whole_tree.EXPORT_ROUNDS)."""
    (tmp_path / "main.py").write_text(
        "def leaf():\n    pass\n"
        "def apply(f):\n    f()\n"
        "def twice(g):\n    g(leaf)\n"
        "def main():\n    twice(apply)\n")
    adj = _adjacency(tmp_path)
    assert adj["main.twice"] == ["main.apply"]
    assert adj["main.apply"] == ["main.leaf"]


def test_attributes_builtin_types_lack_are_no_calls(tmp_path):
    """`self.x = None` on one path and a module on another: `self.x.view()` calls the module's
    method, not `None.view` (NoneType has no `view`); a list's `float` does not exist either,
    while a str's `join` does."""
    (tmp_path / "main.py").write_text(
        "class M:\n    def view(self):\n        pass\n"
        "class W:\n    def __init__(self):\n        self.m = None\n"
        "    def build(self):\n        self.m = M()\n"
        "    def run(self):\n        self.m.view()\n        [1, 2].float()\n        ', '.join([])\n")
    adj = _adjacency(tmp_path)
    assert set(adj["main.W.run"]) == {"main.M.view", "<**PyStr**>.join"}


def test_attribute_of_only_none_stays_an_external_object(tmp_path):
    """`self.ws = None` is all the analysis sees of `ws`: the run-time object was not inferred,
    so `self.ws.run(side=hook)` still hands `hook` to external code (a callback edge), with no
    `None.run` edge."""
    (tmp_path / "main.py").write_text(
        "class R:\n    def __init__(self):\n        self.ws = None\n"
        "    def go(self):\n        def hook():\n            pass\n        self.ws.run(side=hook)\n")
    assert _adjacency(tmp_path)["main.R.go"] == ["main.R.go.hook"]


EXPORT_CASES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "export").glob("*/expected.json"))


@pytest.mark.parametrize("expected", EXPORT_CASES, ids=[p.parent.name for p in EXPORT_CASES])
def test_export_fixture(expected):
    """`fixtures/export/<case>/expected.json`: edges (caller, callee, site, rule) the whole-tree
    export of `root` must hold."""
    from callgraph.api import Analysis

    case = json.loads(expected.read_text())
    roots = [str(expected.parents[2] / r) for r in case["root"]]
    view = Analysis(roots=roots, use_cache=False, warn=lambda m: None).export()
    edges = {(e.caller, e.callee, e.site, e.rule) for e in view.edges}
    for e in case["edges"]:
        assert (e["caller"], e["callee"], e["site"], e["rule"]) in edges, e


def test_edge_table_reads_as_a_multidigraph():
    """The export's edge table (explore.EdgeTable) answers has_edge/edges/nodes as the
    networkx MultiDiGraph it stands in for, a re-added edge replacing its hop."""
    from callgraph.explore import EdgeTable, new_graph

    table, graph = EdgeTable(), new_graph()
    hops = [Hop("m.a", "m.b", "m.py:2:4", "b()", "direct"), Hop("m.a", "m.b", "m.py:3:4", "b()", "direct"),
            Hop("m.a", "m.b", "m.py:3:4", "b()", "mro"), Hop("m.b", "ext.f", "m.py:7:4", "f()", "external"),
            Hop("m.b", "ext.f", "m.py:7:4", "f(x)", "external")]
    for g in (table, graph):
        g.add_node("m.z")
        for h in hops:
            g.add_edge(h.caller, h.callee, key=(h.site, h.rule), hop=h)
    assert table.number_of_edges() == graph.number_of_edges() == 4
    assert sorted(table.edges(keys=True, data=True), key=repr) == sorted(graph.edges(keys=True, data=True), key=repr)
    assert sorted(table.edges(data=True), key=repr) == sorted(graph.edges(data=True), key=repr)
    assert list(table.nodes) == list(graph.nodes)
    for h in hops:
        assert table.has_edge(h.caller, h.callee, key=(h.site, h.rule))
    assert not table.has_edge("m.a", "m.b", key=("m.py:2:4", "mro"))


def test_texts_let_go_are_read_again(tmp_path):
    """whole_tree lets the source texts go after the registries read them; texts() then reads
    the same texts again."""
    from callgraph.index.project import Project
    from callgraph.roots import find_roots

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    return 1\n")
    project = Project(find_roots([str(tmp_path / "pkg")], None))
    first = project.texts()
    project.forget_texts()
    assert project._texts is None and not project.sources._kept
    assert project.texts() == first and any("def f()" in text for _, text in first)


def test_an_implicit_call_at_a_call_leaves_the_call_unresolved(tmp_path):
    """`cfg.get(k)` on a class with a `__getattribute__`: the hook's edge is placed at the node
    of the call's callee, the same site. It resolves nothing of the call: the call's own
    unresolved row stays in the export (before, the site's edge dropped the row)."""
    (tmp_path / "main.py").write_text(
        "class Cfg:\n"
        "    def __getattribute__(self, name):\n"
        "        return object.__getattribute__(self, name)\n"
        "def read(cfg: Cfg, make):\n"
        "    return cfg.get('model_type')\n")
    out = tmp_path / "g.json"
    assert main(["export", "--root", str(tmp_path), "-o", str(out), "--no-cache"]) == 0
    view = formats.view_from_json(json.loads(out.read_text()))
    site = [e.site for e in view.edges if e.callee == "main.Cfg.__getattribute__"]
    assert site, "the hook runs on the read"
    assert any(u.caller == "main.read" and u.site == site[0] and u.expr.endswith("(...)")
               for u in view.unresolved), view.unresolved


def test_a_closure_past_its_contexts_keeps_its_row(tmp_path):
    """A decorator applied to more functions than a closure keeps contexts for
    (whole_tree.EXPORT_CLOSURE_CONTEXTS): the wrapper's `func(...)` gets the edges of the
    contexts swept, and its unresolved row (parameter `func` not known) stays for the others;
    before, the edges of those were missing with no row."""
    from callgraph.whole_tree import EXPORT_CLOSURE_CONTEXTS
    n = EXPORT_CLOSURE_CONTEXTS + 2
    (tmp_path / "main.py").write_text(
        "def traced(func):\n"
        "    def wrapper(*args):\n"
        "        return func(*args)\n"
        "    return wrapper\n"
        + "".join(f"@traced\ndef f{i}():\n    pass\n" for i in range(n))
        + "def main():\n" + "".join(f"    f{i}()\n" for i in range(n)))
    out = tmp_path / "g.json"
    assert main(["export", "--root", str(tmp_path), "-o", str(out), "--no-cache"]) == 0
    view = formats.view_from_json(json.loads(out.read_text()))
    called = {e.callee for e in view.edges if e.caller == "main.traced.wrapper"}
    rows = [u for u in view.unresolved if u.caller == "main.traced.wrapper"]
    assert called == {f"main.f{i}" for i in range(n)} or rows, (called, rows)


_HANDED_THROUGH = (
    "class A:\n    def forward(self):\n        pass\n"
    "class B:\n    def forward(self):\n        pass\n"
    "def run(m):\n    m.forward()\n")


@pytest.mark.parametrize("chain", [
    # `mid` hands B to `run` only once `mid` is resolved with its callers' arguments
    "def mid(x):\n    run(x)\n"
    "def main():\n    run(A())\n    mid(B())\n",
    # ... and one call further down: `hop`'s union grows after its last pass, and `run` (which
    # `hop` reaches) lacks B as well
    "def hop(y):\n    run(y)\n"
    "def mid(x):\n    hop(x)\n"
    "def main():\n    run(A())\n    hop(A())\n    mid(B())\n",
], ids=["one-helper", "two-helpers"])
def test_an_instance_handed_through_helpers_keeps_its_row(tmp_path, chain):
    """An instance passed down through helpers reaches `run`'s union only in a later pass, which
    re-resolves only callees handed a function or class: `run`'s `m.forward()` lists A's
    `forward`, and B's is either an edge too or the site keeps its unresolved row. Before, the
    row was dropped as resolved and `callers B.forward` said 0, with nothing unresolved."""
    (tmp_path / "main.py").write_text(_HANDED_THROUGH + chain)
    out = tmp_path / "g.json"
    assert main(["export", "--root", str(tmp_path), "-o", str(out), "--no-cache"]) == 0
    view = formats.view_from_json(json.loads(out.read_text()))
    called = {e.callee for e in view.edges if e.caller == "main.run"}
    rows = [u for u in view.unresolved if u.caller == "main.run" and u.expr == "m.forward()"]
    assert "main.A.forward" in called
    assert "main.B.forward" in called or rows, (called, view.unresolved)


def test_callers_counts_the_unresolved_sites(tmp_path, capsys):
    """`callers` walks edges only: it says how many unresolved sites the tree has, which a
    caller could go through, in its summary and its JSON."""
    (tmp_path / "main.py").write_text("def target():\n    pass\ndef f(g):\n    g()\n")
    assert main(["callers", "main.target", "--root", str(tmp_path), "--no-cache"]) == 0
    assert "0 function(s) may reach main.target (and 1 unresolved call site(s)" in capsys.readouterr().err
    assert main(["callers", "main.target", "--root", str(tmp_path), "--no-cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unresolved_sites"] == 1
