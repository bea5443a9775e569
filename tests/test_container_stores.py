"""Stores into containers: a run of stores applied at once (`_put_all`) gives the value that
applying them one by one (`_put`, the rule's definition of one store) gives, keys in the same order."""
from __future__ import annotations

import random
from functools import reduce

from callgraph.index.bindings import ANY_KEY, Binding
from callgraph.semantics.containers import _put, _put_all
from callgraph.values import EMPTY, VExt, VSeq

_KEYS = ["a", "b", "c", "d", 0, 1, 2, -1, True, 1.0, None, "0"]


def _vals(rng: random.Random) -> frozenset:
    return frozenset(VExt(f"ext.v{rng.randrange(6)}") for _ in range(rng.randrange(1, 3)))


def _seq(rng: random.Random) -> VSeq:
    shape = rng.randrange(4)
    if shape == 0:  # a dict literal: keys in source order, not sorted
        keys = tuple((k, _vals(rng)) for k in dict.fromkeys(rng.sample(_KEYS, rng.randrange(0, 6))))
        return VSeq(frozenset().union(*(kv for _, kv in keys)) if keys else EMPTY, "dict", None, keys)
    if shape == 1:
        items = tuple(_vals(rng) for _ in range(rng.randrange(0, 4)))
        return VSeq(frozenset().union(*items) if items else EMPTY, "list", items)
    if shape == 2:
        return VSeq(_vals(rng), "dict")
    return VSeq(EMPTY, "list")


def _step(rng: random.Random) -> tuple:
    key = lambda: ANY_KEY if rng.random() < 0.1 else rng.choice(_KEYS)  # noqa: E731
    kind = rng.randrange(10)
    strong = rng.random() < 0.6
    if kind < 6:  # x[k] = v, mostly at one literal key (a table filled key by key)
        keys = (key(),) if kind < 5 else (key(), key())
        return Binding("item", None, ("=",), keys=keys), _vals(rng), None, strong
    if kind == 6:  # x.update({...}) with known keys (sometimes none), or unknown ones
        pairs = [(key(), _vals(rng)) for _ in range(rng.randrange(0, 3))] if rng.random() < 0.8 else None
        return Binding("item", None, ("**",)), _vals(rng), pairs, strong
    if kind == 7:  # x.append(v) / x["a"].append(v)
        return Binding("item", None, (), keys=() if rng.random() < 0.7 else (key(),)), _vals(rng), None, strong
    if kind == 8:
        return Binding("item", None, ("*",)), _vals(rng), None, strong
    return Binding("item", None, ("=",), keys=(ANY_KEY,)), _vals(rng), None, strong


def test_a_run_of_stores_at_once_is_the_stores_one_by_one():
    rng = random.Random(14)
    fast = 0
    for _ in range(3000):
        v = _seq(rng)
        steps = [_step(rng) for _ in range(rng.randrange(0, 12))]
        one_by_one = reduce(lambda s, st: _put(s, st[0], st[1], st[2], st[3], 0), steps, v)
        at_once = _put_all(v, steps)
        assert at_once == one_by_one, (v, steps)
        assert at_once.keys == one_by_one.keys  # the same order, not only the same entries
        fast += v.keys is not None and len(steps) > 1
    assert fast > 300  # the keyed table (the batched path) was exercised


def test_a_big_table_filled_key_by_key_is_linear():
    """2,000 literal-key stores: one table, sorted once (was 2,000 copies and sorts of it)."""
    steps = [(Binding("item", None, ("=",), keys=(f"k{i}",)), frozenset({VExt(f"ext.f{i}")}), None, True)
             for i in range(2000)]
    out = _put_all(VSeq(EMPTY, "dict", None, ()), steps)
    assert [k for k, _ in out.keys] == sorted(f"k{i}" for i in range(2000))
    assert len(out.elems) == 2000


def test_an_empty_update_changes_nothing():
    """`d = {"b": f, "a": g}; d.update({})`: d's keys stay in the literal's order (one by one, no
    store re-sorts them), and a store after it sorts them as one by one does."""
    f, g = frozenset({VExt("ext.f")}), frozenset({VExt("ext.g")})
    d = VSeq(f | g, "dict", None, (("b", f), ("a", g)))
    empty = (Binding("item", None, ("**",)), EMPTY, [], True)
    assert _put_all(d, [empty]) == d and _put_all(d, [empty]).keys == d.keys
    store = (Binding("item", None, ("=",), keys=("c",)), f, None, True)
    assert _put_all(d, [empty, store]).keys == _put(_put(d, *empty, 0), *store, 0).keys == (("a", g), ("b", f), ("c", f))


def test_stores_at_unknown_keys_into_nested_dicts_stay_bounded():
    """`parsed = {k: {} for k in M}` (keys unknown), then `parsed["config"]["x{i}"] = f` fourteen
    times: each store keeps the inner dicts as they were and adds them changed, which doubled
    them at each store (2**14). Bounded, and every value stored is still held."""
    from callgraph.values import MAX_CONTAINER_VALUES

    parsed = VSeq(frozenset({VSeq(EMPTY, "dict", None, ())}), "dict")
    steps = [(Binding("item", None, ("=",), keys=("config", f"x{i}")), frozenset({VExt(f"ext.f{i}")}), None, True)
             for i in range(14)]
    out = _put_all(parsed, steps)
    inner = [e for e in out.elems if isinstance(e, VSeq)]
    assert 0 < len(inner) <= MAX_CONTAINER_VALUES + 1
    held = frozenset().union(*(kv for e in inner for _, kv in (e.keys or ()))) | frozenset().union(*(e.elems for e in inner))
    assert held >= {VExt(f"ext.f{i}") for i in range(14)}
