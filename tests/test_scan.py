"""The body scan skips nodes it reads nothing off: that list must cover every binding node."""
from __future__ import annotations

import ast
from pathlib import Path

from callgraph.index import scopes
from callgraph.index.children import child_nodes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RICH = Path(__file__).resolve().parent / "test_compact.py"


def _trees():
    for path in [RICH, *sorted(FIXTURES.rglob("*.py"))]:
        try:
            tree = ast.parse(path.read_bytes().decode("utf-8-sig"))
        except (UnicodeDecodeError, SyntaxError):
            continue
        yield tree
        if path == RICH:  # the syntax-rich source inside it
            yield ast.parse(next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                                 and getattr(n.targets[0], "id", "") == "RICH"))


def test_nodes_the_scan_skips_bind_nothing():
    skipped = 0
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, scopes._SCANNED_NODES):
                continue
            skipped += 1
            table: dict = {}
            scopes.bind_node(node, table, "m", "")
            assert table == {}, ast.dump(node)
            assert list(scopes._self_assignments(node, "self")) == [], ast.dump(node)
    assert skipped > 1000


def test_child_nodes_are_iter_child_nodes_less_singletons():
    for tree in _trees():
        for node in ast.walk(tree):
            want = [c for c in ast.iter_child_nodes(node)
                    if not isinstance(c, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))]
            assert child_nodes(node) == want
