"""The body scan skips nodes it reads nothing off: that list must cover every binding node."""
from __future__ import annotations

import ast
from pathlib import Path

from callgraph.index import scopes
from callgraph.index.children import child_nodes
from test_compact import RICH, _fixture_trees


def _trees():
    """The syntax-rich source and every fixture file (test_compact.py's sources)."""
    yield ast.parse(RICH)
    yield from _fixture_trees()


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


def _walk_owned_reference(node):
    """The plain walk _walk_owned speeds up: every child, its statement recomputed each time."""
    if isinstance(node, ast.Lambda):
        stack = [(node.body, None)]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stack = [(s, s) for s in node.body]
    else:
        stack = [(node, node if isinstance(node, ast.stmt) else None)]
    while stack:
        cur, owner = stack.pop()
        yield cur, owner
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            children = [*cur.decorator_list, *(d for d in cur.args.defaults if d is not None),
                        *(d for d in cur.args.kw_defaults if d is not None)]
        elif isinstance(cur, ast.Lambda):
            children = cur.args.defaults
        elif isinstance(cur, ast.ClassDef):
            children = [*cur.decorator_list, *cur.bases]
        else:
            children = child_nodes(cur)
        for child in children:
            stack.append((child, child if isinstance(child, ast.stmt) else owner))


def test_walk_owned_gives_each_node_its_statement():
    checked = 0
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
                got = [(id(n), id(o)) for n, o in scopes._walk_owned(node)]
                assert got == [(id(n), id(o)) for n, o in _walk_owned_reference(node)]
                checked += 1
    assert checked > 100


def _comprehension_scoped(root) -> dict:
    """id(node) -> the names comprehensions around it bind (Python 3: their own scope), for the
    nodes inside each comprehension but its first iterable (evaluated in the enclosing scope)."""
    out: dict = {}
    for c in ast.walk(root):
        if isinstance(c, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            names = {t.id for g in c.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
            inside = {id(n) for n in ast.walk(c)} - {id(n) for n in ast.walk(c.generators[0].iter)}
            for i in inside:
                out.setdefault(i, set()).update(names)
    return out


def test_flow_loads_are_the_walks_name_reads():
    """flow._loads_in is _walk_expr specialised to tracked name reads: same nodes, every root,
    but a comprehension's own targets read inside it (not this body's names)."""
    from callgraph.index import flow
    from callgraph.index.compact import compact

    roots = 0
    for tree in _trees():
        for t in (tree, compact(tree)):
            for root in ast.walk(t):
                if not isinstance(root, (ast.stmt, ast.expr)):
                    continue
                scoped = _comprehension_scoped(root)
                for untracked in (set(), {"self", "x"}):
                    want = [n for n in flow._walk_expr(root) if isinstance(n, ast.Name)
                            and isinstance(n.ctx, ast.Load) and n.id not in untracked
                            and n.id not in scoped.get(id(n), ())]
                    got = flow._loads_in(root, untracked)
                    assert sorted(map(id, got)) == sorted(map(id, want)), ast.dump(root)
                roots += 1
    assert roots > 2000


STORE_TEXTS = '''
TABLE = {}
ITEMS = []
def plain(x):
    return x + 1
def keyed(k, v):
    TABLE[k] \\
        = v
def appended(v):
    ITEMS.append(
        v)
def spaced(v):
    ITEMS . extend (v)
def nested(v):
    def inner():
        global ITEMS
        ITEMS = [v]
    return inner
def compared(k):
    return TABLE[k] == 1
'''


def _store_functions(text: str) -> dict[str, bool]:
    """Per def: whether it makes an item store or says `global` (what remote_stores reads),
    and whether store_lines spans it."""
    tree = ast.parse(text)
    lines = scopes.store_lines(text)
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stores = any(scopes._mutation(n) is not None or isinstance(n, ast.Global) for n in ast.walk(node))
            out[node.name] = (stores, scopes.spans_any(lines, node))
    return out


def test_store_lines_span_every_item_store_and_global():
    """A function store_lines does not span is skipped by containers.remote_stores: it must
    make no item store and declare nothing global, however the statement is laid out."""
    found = _store_functions(STORE_TEXTS)
    assert {n for n, (stores, _) in found.items() if stores} == {"keyed", "appended", "spaced", "nested", "inner"}
    assert all(spanned for stores, spanned in found.values() if stores), found
    assert not found["plain"][1] and not found["compared"][1]  # `==` is no store
    checked = 0
    for path in sorted(Path(__file__).parent.parent.joinpath("fixtures").rglob("*.py")):
        try:
            text = path.read_bytes().decode("utf-8-sig")
            found = _store_functions(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for name, (stores, spanned) in found.items():
            if stores:
                checked += 1
                assert spanned, (path, name)
    assert checked >= 10
