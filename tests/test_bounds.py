"""Bounds on the whole-tree work of one call site (infer/calls.py MAX_RETURNING_TARGETS): a call
that may run more functions than the bound keeps an edge to each, and its value is unknown,
so what is called on that value is unresolved, with the reason, never silently missing."""
from __future__ import annotations

import textwrap

import pytest

from callgraph.api import Analysis
from callgraph.infer import calls


def _tree(tmp_path, n: int):
    """`use(b: Base)` calls `b.make().go()`: each of n subclasses' `make` returns its own Leaf."""
    lines = ["class Base:", "    def make(self):", "        return None", ""]
    for i in range(n):
        lines += [f"class Leaf{i}:", "    def go(self):", "        return 1", "",
                  f"class Sub{i}(Base):", "    def make(self):", f"        return Leaf{i}()", ""]
    lines += ["def use(b: Base):", "    r = b.make()", "    r.go()", ""]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("\n".join(lines))
    return pkg


def _export(pkg):
    view = Analysis([str(pkg)], use_cache=False).export()
    edges = {(e.caller, e.callee) for e in view.edges}
    return view, edges


@pytest.mark.parametrize("n, capped", [(3, False), (5, True)])
def test_many_targets_keep_edges_and_leave_their_value_unknown(tmp_path, monkeypatch, n, capped):
    monkeypatch.setattr(calls, "MAX_RETURNING_TARGETS", 4)
    view, edges = _export(_tree(tmp_path, n))
    # every override of make is a target either way
    assert {("pkg.m.use", f"pkg.m.Sub{i}.make") for i in range(n)} <= edges
    goes = {("pkg.m.use", f"pkg.m.Leaf{i}.go") for i in range(n)}
    rows = [u for u in view.unresolved if u.caller == "pkg.m.use" and u.expr == "r.go()"]
    if capped:
        assert not goes & edges
        assert rows and all("possible callees" in u.why for u in rows), rows
    else:
        assert goes <= edges and not rows


def test_reach_through_a_capped_call_is_unknown_not_unreachable(tmp_path, monkeypatch):
    monkeypatch.setattr(calls, "MAX_RETURNING_TARGETS", 4)
    pkg = _tree(tmp_path, 5)
    proof = Analysis([str(pkg)], use_cache=False).reach("pkg.m.use", "pkg.m.Leaf3.go")
    assert proof.verdict == "unknown", proof


def test_a_widened_answer_is_asked_again_not_kept_from_the_depth_limit(tmp_path):
    """Past MAX_RETURN_CONTEXTS argument sets a helper's value is its widened context's. That
    answer was kept under the caller's own context too, so when the widened context was first
    asked at the inference depth limit (an unknown), every later call with those arguments got
    that unknown, at any depth (and its key held the argument sets for the whole run). It is
    now looked up again: the depth-limited call is unknown, the same call from the top is not."""
    from callgraph.infer.evaluator import Evaluator
    from callgraph.values import Ctx, VClass, VInst, VUnknown

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(textwrap.dedent("""\
        class Leaf:
            pass

        class A:
            pass

        class B:
            pass

        def helper(x):
            return Leaf()
        """))
    project = Analysis([str(pkg)], use_cache=False).project
    project.load_all()
    ev = Evaluator(project, max_depth=1, max_return_contexts=1)
    fn = project.functions["pkg.m.helper"]
    leaf = frozenset({VInst("pkg.m.Leaf")})
    first = Ctx(fn.qual, (("x", frozenset({VClass("pkg.m.A")})),))
    other = Ctx(fn.qual, (("x", frozenset({VClass("pkg.m.B")})),))
    assert ev.returns(fn, first) == leaf
    ev._depth = ev.max_depth  # asked from a helper at the depth limit: widened, then cut
    assert all(isinstance(v, VUnknown) for v in ev.returns(fn, other))
    ev._depth = 0
    assert ev.returns(fn, other) == leaf
    assert other not in ev._returns


def test_equal_return_values_of_two_contexts_are_one_object(tmp_path):
    """The return memo is kept for the whole export, and contexts that differ only in what the
    answer does not depend on (`cls` of 1,205 config classes) rebuild equal values: one is kept."""
    from callgraph.infer.evaluator import Evaluator
    from callgraph.values import Ctx, VClass

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(textwrap.dedent("""\
        class Leaf:
            pass

        class A:
            pass

        class B:
            pass

        def helper(x):
            table = {"leaf": Leaf, "other": [Leaf()]}
            return table, x
        """))
    project = Analysis([str(pkg)], use_cache=False).project
    project.load_all()
    ev = Evaluator(project)
    fn = project.functions["pkg.m.helper"]
    a, b, c = (Ctx(fn.qual, (("x", frozenset({VClass(f"pkg.m.{k}")})),)) for k in "AAB")
    assert a == b and a is not b
    ra = ev.returns(fn, a)
    ev._returns.clear()  # asked afresh: built again, equal
    rb = ev.returns(fn, b)
    assert rb == ra and rb is ra
    assert ev.returns(fn, c) != ra


def test_heap_release_gives_back_freed_pages_where_glibc_can():
    """heap.release (called by a whole-tree sweep after each forget_local) returns the C heap's
    free pages: after large tables are dropped, RSS falls at the call (glibc), and it never raises."""
    import platform

    from callgraph import heap

    def rss_kb() -> int:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS"))

    heap.release()
    if not (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"):
        return
    assert heap._TRIM[0] is not None
    keep = [set(range(i, i + 200)) for i in range(0, 400_000, 200)]  # tables glibc allocates
    filler = [bytes(4000) for _ in range(100)]  # glibc blocks after them, kept: no trim at the top
    del keep
    dropped = rss_kb()
    heap.release()
    assert rss_kb() < dropped - 10_000  # the freed set tables' pages (~15 MB), resident until now
    del filler


def test_a_classmethod_widened_past_its_contexts_keeps_its_class(tmp_path):
    """Past MAX_CONTEXTS_PER_FUNCTION a callee is explored once more with its parameters unbound.
    An unbound `self` is any instance of its class or below, but an unbound `cls` is the class
    itself only: `Base.build` (`cls().run()`) called as `SubN.build()` for more subclasses than
    the bound ran `Base.run` alone in the widened context, and the last subclass's `run` (the
    only one reaching `Target.hit`) was a false "unreachable"."""
    from callgraph.explore import MAX_CONTEXTS_PER_FUNCTION

    n = MAX_CONTEXTS_PER_FUNCTION + 6
    src = textwrap.dedent('''\
        class Target:
            def hit(self):
                return 1


        class Base:
            @classmethod
            def build(cls):
                return cls().run()

            def run(self):
                return 0
        ''')
    for i in range(n):
        src += f"\n\nclass Sub{i}(Base):\n    def run(self):\n        return {'Target().hit()' if i == n - 1 else 0}\n"
    src += "\n\nclass Entry:\n    def go(self):\n" + "".join(f"        Sub{i}.build()\n" for i in range(n))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(src)
    proof = Analysis([str(pkg)], use_cache=False).reach("pkg.m.Entry.go", "pkg.m.Target.hit")
    assert proof.verdict == "reached", proof
    assert [h.callee for h in proof.path] == ["pkg.m.Base.build", f"pkg.m.Sub{n - 1}.run", "pkg.m.Target.hit"]
