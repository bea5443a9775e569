"""leads.py: the order an unknown's blockers are listed in (the fixture blockers_holder_first
shows it end to end; these pin the pieces)."""
from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from callgraph.leads import Leads

MODELS = '''
class Target(Base):
    pass


class Sub(Target):
    pass


class Holder(Module):
    def __init__(self):
        self.start, self.end, self.layers = make_layers(
            3,
            lambda i: Sub(i),
        )
        self.flag = isinstance(self, Holder) == 1


class Owner(Module):
    def __init__(self):
        self.language_model = Holder()
'''
HEADERS = {"Base": {("Target", Path("m.py"))}, "Target": {("Sub", Path("m.py"))},
           "Module": {("Holder", Path("m.py")), ("Owner", Path("m.py"))}}


def _fn(source: str, path: str = "other.py"):
    node = ast.parse(source).body[0]
    return SimpleNamespace(node=node, module=SimpleNamespace(path=Path(path)))


def _call(fn) -> ast.Call:
    return next(n for n in ast.walk(fn.node) if isinstance(n, ast.Call))


def test_holders_follow_subclasses_continuation_lines_and_owners() -> None:
    leads = Leads([(Path("m.py"), MODELS)], HEADERS, "Target")
    # `Sub(i)` two lines below `self.layers = make_layers(`: all three targets hold it
    assert leads.holders == {"start": 0, "end": 0, "layers": 0, "language_model": 1}
    assert leads.files == {"m.py": 0}


def test_a_blocker_through_a_holder_comes_before_one_that_is_not() -> None:
    leads = Leads([(Path("m.py"), MODELS)], HEADERS, "Target")
    through_loop = _fn("def f(self):\n    for layer in self.layers:\n        layer(x)\n")
    owner = _fn("def g(self):\n    self.language_model(x)\n")
    other = _fn("def h(self):\n    self.backend(x)\n")
    in_file = _fn("def k(self):\n    self.backend(x)\n", path="m.py")
    keys = [leads.key(_call(f), f) for f in (through_loop, owner, in_file, other)]
    assert keys == sorted(keys) and len(set(keys)) == 4, keys


def test_rows_without_a_node_and_targets_without_a_class_are_not_ranked() -> None:
    leads = Leads([(Path("m.py"), MODELS)], HEADERS, "Target")
    assert leads.key(None, None) == (1, 0, 2)
    fn = _fn("def g(self):\n    self.language_model(x)\n")
    assert Leads([(Path("m.py"), MODELS)], HEADERS, None).key(_call(fn), fn) == (1, 0, 2)


WINDOWS = '''
class Outer(Module):
    class Inner(Module):
        def __init__(self):
            self.inner = Sub(
                1)

    def __init__(self):
        # a comment at the margin of nothing
''' + "".join(f"        self.pad{i} = {i}\n" for i in range(60)) + '''
        self.split = (Sub
                      (2))
        self.unsplit = Sub
        (3)
        self.late = build(
''' + "".join(f"            {i},\n" for i in range(30)) + '''            Target(0))
        self.isinstance_only = isinstance(x, Target)


def free():
    self.nowhere = Target()
'''


def test_only_stores_above_a_line_making_the_family_are_read_and_their_class_is_found() -> None:
    """The reading starts from the lines that make a family class (`Sub(`, `Sub\\n(`) and walks
    up to the store and its class: nested classes, a call split over lines (and a name whose
    statement ends before the call), a statement of thirty continuation lines, and a store
    outside any class (not a holder)."""
    headers = {"Target": {("Sub", Path("w.py"))}, "Module": {("Outer", Path("w.py")), ("Inner", Path("w.py"))}}
    leads = Leads([(Path("w.py"), WINDOWS)], headers, "Target")
    assert leads.holders == {"inner": 0, "split": 0, "late": 0}
    assert leads.files == {"w.py": 0}
