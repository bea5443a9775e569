"""Compacted syntax trees are the parser's trees, field for field and position for position."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from callgraph.index.compact import compact

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

RICH = '''
import os as o, sys
from .x import (a as b, c)
@dec(1, k=2)
class K(Base, metaclass=M):
    x: int = 3
    async def f(self, a, /, b=2, *c, d, e=5, **f) -> "K":
        async with g() as (h, i), j:
            async for k in l:
                yield from m
        match self.p:
            case [1, *rest] if rest: pass
            case {"k": v, **kw}: pass
            case K(a=1) | None: pass
        return lambda q, *, r=1: (q, r, [s for s in t if s], {u: w for u, w in z}, (y := 4))
try:
    raise E from F
except* (E1, E2) as err:
    del err
finally:
    global G
print(f"{o!r:>{w}} {sys.argv[1:2:-1]}", 2 ** -1, not a or b and c, x if y else z, *p, **q)
'''


_MISSING = object()


def _assert_same(new, old):
    """Field by field and position by position (`ast.dump` would print `asname=None` for a
    slotted alias, where the class default hid it before)."""
    if isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old)
        for n, o in zip(new, old):
            _assert_same(n, o)
    elif isinstance(old, ast.AST):
        assert type(new).__name__ == type(old).__name__
        for name in old._fields + old._attributes:
            _assert_same(getattr(new, name, _MISSING), getattr(old, name, _MISSING))
    else:
        assert new == old and type(new) is type(old)


def _fixture_trees() -> list[ast.AST]:
    trees = []
    for path in sorted(FIXTURES.rglob("*.py")):
        try:
            trees.append(ast.parse(path.read_bytes().decode("utf-8-sig")))
        except (UnicodeDecodeError, SyntaxError):
            continue  # the fixtures of unreadable files
    return trees


@pytest.mark.parametrize("which", ["rich", "fixtures"])
def test_compact_trees_equal_the_parsers(which):
    trees = [ast.parse(RICH)] if which == "rich" else _fixture_trees()
    assert len(trees) > (0 if which == "rich" else 20)
    for tree in trees:
        small = compact(tree)
        assert small is not tree
        _assert_same(small, tree)
        assert ast.unparse(small) == ast.unparse(tree)
        for old, new in zip(ast.walk(tree), ast.walk(small)):
            assert isinstance(new, type(old)) and type(new).__name__ == type(old).__name__
            if old._fields or old._attributes:
                assert type(new) is not type(old)
                assert vars(new) == {}  # every field lives in a slot, none in a dict


def test_compact_keeps_what_a_node_lacks():
    """A node built by hand, without positions or with a field unset, stays without them."""
    bare = ast.Expr(value=ast.Name(id="x"))
    small = compact(bare)
    assert small.value.id == "x"
    assert not hasattr(small, "lineno") and not hasattr(small.value, "ctx")
    assert not hasattr(small.value, "lineno")
    alias = compact(ast.alias(name="m"))
    assert alias.asname is None  # an optional field reads as None, as on the parser's class


def test_compact_keeps_unknown_extras_on_the_original():
    node = ast.parse("f(x)").body[0]
    node.value.note = "set by someone"
    small = compact(node)
    assert small.value is node.value  # copying would lose `note`
    assert small.value.note == "set by someone"
