"""fixpoint.Solver: memo tables that double as recursion guards keep only settled values.

Systems of set equations with cycles (what recursive helpers, loops that rebind a name from
itself and mutually recursive attributes make in the evaluator) are solved through the solver in
many orders; every answer, and every entry the table keeps for good, must be the least
solution, computed here by plain iteration.
"""
from __future__ import annotations

import random

import pytest

from callgraph.fixpoint import MAX_ROUNDS, MISSING, Solver, settled


def _least(n: int, deps: dict, shift: dict) -> dict:
    """value(i) = {i} | value(j) for j in deps[i] | {x + 1 for x in value(j) if x + 1 < 2n}
    for j in shift[i], by Kleene iteration."""
    val = {i: frozenset() for i in range(n)}
    while True:
        new = {}
        for i in range(n):
            out = {i}
            for j in deps[i]:
                out |= val[j]
            for j in shift[i]:
                out |= {x + 1 for x in val[j] if x + 1 < 2 * n}
            new[i] = frozenset(out)
        if new == val:
            return val
        val = new


class _System:
    def __init__(self, deps: dict, shift: dict):
        self.deps, self.shift = deps, shift
        self.solver = Solver()
        self.table: dict = {}
        self.computed = 0

    def value(self, i: int) -> frozenset:
        return self.solver.solve(self.table, i, lambda: self._compute(i), frozenset(), lambda a, b: a | b,
                                 unsettled=lambda v: v | {UNSETTLED})

    def _compute(self, i: int) -> frozenset:
        self.computed += 1
        out = {i}
        for j in self.deps[i]:
            out |= self.value(j)
        for j in self.shift[i]:
            out |= {x + 1 for x in self.value(j) if x != UNSETTLED and x + 1 < 2 * len(self.deps)}
            out |= self.value(j) & {UNSETTLED}
        return frozenset(out)


UNSETTLED = -1  # what a value given up after MAX_ROUNDS holds


def _right(got: frozenset, want: frozenset) -> bool:
    """The least solution, or (given up after MAX_ROUNDS) part of it marked as unsettled: never
    a value it lacks without the mark, never one it does not hold."""
    return got == want or (UNSETTLED in got and got - {UNSETTLED} <= want)


@pytest.mark.parametrize("seed", range(600))
def test_every_order_gives_the_least_solution(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 16)
    deps = {i: rng.sample(range(n), rng.randint(0, min(3, n))) for i in range(n)}
    shift = {i: rng.sample(range(n), rng.randint(0, 1)) for i in range(n)}
    want = _least(n, deps, shift)
    system = _System(deps, shift)
    order = list(range(n))
    rng.shuffle(order)
    for i in order:
        assert _right(system.value(i), want[i]), (i, deps, shift)
        assert system.solver.stack == [] and system.solver.log == []
    for i in range(n):  # what is kept for good is right, and everything asked is kept
        assert _right(settled(system.table, i), want[i])


def test_a_value_worked_out_from_a_guard_is_not_kept() -> None:
    """f = {f} | g, g = {g} | f: asked for g first, f meets g in progress. f's first answer
    (without g's own) must not be what a later read of f gets."""
    deps = {0: [1], 1: [0]}
    system = _System(deps, {0: [], 1: []})
    assert system.value(1) == {0, 1}
    assert system.value(0) == {0, 1}


def test_a_value_read_from_itself_grows_until_it_settles() -> None:
    """descend(d) = {0} | {x + 1 for x in descend(d - 1)}: a value read from its own value."""
    system = _System({0: []}, {0: [0]})
    assert system.value(0) == frozenset({0, 1})
    chain = _System({i: [] for i in range(3)}, {i: [0] if i == 0 else [] for i in range(3)})
    assert chain.value(0) == frozenset(range(6))  # a round per link, and one to see it settled
    assert chain.solver.unsettled == 0 and chain.solver.rounds == 6
    longer = _System({i: [] for i in range(5)}, {i: [0] if i == 0 else [] for i in range(5)})
    got = longer.value(0)
    assert UNSETTLED in got and got - {UNSETTLED} < frozenset(range(10))  # given up, and says so


def test_what_never_settles_is_marked_not_left_out() -> None:
    solver, table = Solver(), {}

    def grow() -> frozenset:
        return frozenset({len(solver.solve(table, "k", grow, frozenset(), lambda a, b: a | b,
                                           unsettled=lambda v: v | {"unsettled"}))})

    got = solver.solve(table, "k", grow, frozenset(), lambda a, b: a | b, unsettled=lambda v: v | {"unsettled"})
    assert "unsettled" in got and solver.unsettled == 1
    assert set(range(MAX_ROUNDS)) <= got
    assert solver.stack == []


def test_a_conservative_stand_in_is_not_worked_out_again() -> None:
    solver, table = Solver(), {}
    calls = []

    def compute() -> str:
        calls.append(1)
        inner = solver.solve(table, "k", compute, "undecided", conservative=True)
        return f"decided after reading {inner}"

    assert solver.solve(table, "k", compute, "undecided", conservative=True) == "decided after reading undecided"
    assert len(calls) == 1


def test_a_failed_computation_leaves_nothing_in_progress() -> None:
    solver, table = Solver(), {}

    def inner() -> frozenset:
        solver.solve(table, "outer", outer, frozenset(), lambda a, b: a | b)  # in progress: a stand-in
        raise RecursionError("deep")

    def outer() -> frozenset:
        return solver.solve(table, "inner", inner, frozenset(), lambda a, b: a | b)

    with pytest.raises(RecursionError):
        solver.solve(table, "outer", outer, frozenset(), lambda a, b: a | b)
    assert table == {} and solver.stack == [] and solver.log == []
    assert solver.read(table, "outer") is MISSING


# -- widening: what a cycle's value may grow by without end is bounded ----------------------

def _chain(base: str, step: str, k: int) -> str:
    return base + step * k


@pytest.mark.parametrize("base,step", [("torch.zeros()", ".view().contiguous()"), ("torch.nn.Module.to()", ".to()"),
                                       ("transformers.PretrainedConfig", ".language_config.text_config"),
                                       ("<item>", ".reconstruct_on_target_device()"), ("x.y", ".a.b.c().d")])
def test_a_growing_name_widens_to_a_few_names_keeping_what_it_decides(base: str, step: str) -> None:
    from callgraph.semantics.open_values import opaque_call
    from callgraph.values import VExt, widen_cycle

    widened = set()
    for k in range(1, 40):
        name = _chain(base, step, k)
        (w,) = widen_cycle(frozenset({VExt(name)}))
        widened.add(w.name)
        assert w.name.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]  # its last part kept
        assert w.name.split(".")[0] == name.split(".")[0]
        if opaque_call(name) is not None:  # open stays open: widening is never less cautious
            assert opaque_call(w.name) is not None, (name, w.name)
        for attr in ("forward", "__call__"):
            if opaque_call(f"{name}.{attr}") is not None:
                assert opaque_call(f"{w.name}.{attr}") is not None, (name, w.name)
        (again,) = widen_cycle(frozenset({w}))
        assert again == w  # widened once is widened
    assert len(widened) <= 4, widened


def test_names_grown_by_alternating_methods_settle_within_the_rounds() -> None:
    """`x = x.index_select(...).to(...)` in a loop (transformers' cache layers): each round names
    every chain one part longer, and no part repeats next to itself. Widened past
    MAX_NAME_PARTS, the chains are a few names per first and last parts, so the cycle settles
    before MAX_ROUNDS instead of being given up as unsettled (a blocker at every call on it)."""
    from callgraph.semantics.open_values import opaque_call
    from callgraph.values import VExt, join_values, unsettled_values, widen_cycle

    solver, table = Solver(), {}

    def grow() -> frozenset:
        seen = solver.solve(table, "k", grow, frozenset(), join_values, unsettled=unsettled_values, widen=widen_cycle)
        out = {VExt("torch.zeros()"), VExt("torch.cat()")}
        for v in seen:
            out |= {VExt(v.name + ".index_select()"), VExt(v.name + ".to()")}
        return frozenset(out)

    got = solver.solve(table, "k", grow, frozenset(), join_values, unsettled=unsettled_values, widen=widen_cycle)
    assert solver.unsettled == 0
    assert all(isinstance(v, VExt) for v in got)  # nothing given up as unknown
    ends = {(v.name.split(".")[0], v.name.rsplit(".", 1)[-1]) for v in got}
    assert ends >= {("torch", "to()"), ("torch", "index_select()")}
    assert all(opaque_call(v.name) is None for v in got if v.name.count("(") > 1)  # tensors' methods: leaves


def test_containers_nested_in_new_combinations_settle_within_the_rounds() -> None:
    """A dict of dicts whose inner dicts hold another mix of values each round (`rope_parameters`,
    a dict per attention type): kept apart, each round made new containers and the cycle never
    settled. Widened, the containers of one kind in one set are one holding what each held."""
    from callgraph.values import VConst, VSeq, join_values, unsettled_values, widen_cycle

    solver, table = Solver(), {}

    def grow() -> frozenset:
        seen = solver.solve(table, "k", grow, frozenset(), join_values, unsettled=unsettled_values, widen=widen_cycle)
        out = {VSeq(frozenset({VConst("default")}), "dict")}
        for v in seen:
            for c in ("full", "sliding"):
                out.add(VSeq(frozenset({v, VConst(c)}), "dict"))
        return frozenset(out)

    got = solver.solve(table, "k", grow, frozenset(), join_values, unsettled=unsettled_values, widen=widen_cycle)
    assert solver.unsettled == 0
    (outer,) = got
    assert {VConst("default"), VConst("full"), VConst("sliding")} <= outer.elems  # every round's kept


def test_containers_nested_past_the_bound_are_unknown_not_dropped() -> None:
    from callgraph.values import MAX_CYCLE_NESTING, VExt, VSeq, VUnknown, widen_cycle

    v = VExt("torch.ones()")
    for _ in range(MAX_CYCLE_NESTING + 2):
        v = VSeq(frozenset({v, VExt("builtins.int()")}), "tuple", (frozenset({v}),))
    (w,) = widen_cycle(frozenset({v}))
    depth, inner = 0, w
    while isinstance(inner, VSeq):
        depth += 1
        inner = next(x for x in inner.elems if not (isinstance(x, VExt) and x.name == "builtins.int()"))
    assert depth == MAX_CYCLE_NESTING and isinstance(inner, VUnknown)


def test_instances_made_with_shifting_arguments_merge_so_that_a_cycle_settles() -> None:
    """Each round, a call binds the first MAX_BOUND_VALUES of a growing set, so the cycle's value
    holds an instance made with another subset each round (`RagConfig.question_encoder`). Widened,
    the instances of one class made with the same keywords are one holding every argument."""
    from callgraph.values import VInst, join_values, unsettled_values, widen_cycle

    def made(args: frozenset) -> VInst:
        return VInst("m.Config", True, (("base", args), ("extra", frozenset({VInst("m.Extra")}))))

    a, b = made(frozenset({VInst("m.A")})), made(frozenset({VInst("m.B")}))
    other = VInst("m.Config", True, (("base", frozenset({VInst("m.A")})),))  # other keywords: apart
    (merged,) = widen_cycle(frozenset({a, b})) - {other}
    assert merged == made(frozenset({VInst("m.A"), VInst("m.B")}))
    assert widen_cycle(frozenset({a, b, other})) == frozenset({merged, other})
    assert widen_cycle(frozenset({merged, other})) == frozenset({merged, other})  # widened once is widened

    solver, table = Solver(), {}
    pool = [VInst(f"m.C{i}") for i in range(20)]

    def shifting() -> frozenset:
        seen = solver.solve(table, "k", shifting, frozenset(), join_values, unsettled=unsettled_values,
                            widen=widen_cycle)
        n = len(seen)  # the subset bound depends on how much the value holds: another each round
        return frozenset({made(frozenset(pool[n % 20: n % 20 + 2]))})

    got = solver.solve(table, "k", shifting, frozenset(), join_values, unsettled=unsettled_values, widen=widen_cycle)
    assert solver.unsettled == 0 and len(got) == 1
    (inst,) = got
    assert dict(inst.init)["base"] >= frozenset(pool[0:2])  # what each round bound is kept


def test_a_stand_in_whose_containers_merged_settles_instead_of_going_back_and_forth() -> None:
    """Joined, a value's containers merge past MAX_CONTAINER_VALUES; the round after a merge adds
    the unmerged containers again, which the merged one holds. Compared by equality the stand-in
    went back and forth between the two until MAX_ROUNDS (CLIP configs' `text_config`); a round
    that adds only what the stand-in's containers hold has settled."""
    from callgraph.values import (MAX_CONTAINER_VALUES, VConst, VSeq, covered, join_values, unsettled_values,
                                  widen_cycle)

    lists = [VSeq(frozenset({VConst(f"s{i}")})) for i in range(MAX_CONTAINER_VALUES + 1)]
    merged = join_values(frozenset(lists[:1]), frozenset(lists[1:]))
    assert len(merged) == 1 and covered(frozenset(lists), merged)  # the merged list holds each
    assert not covered(frozenset({VSeq(frozenset({VConst("other")}))}), merged)
    assert not covered(frozenset({VSeq(frozenset({VConst("s1")}), "tuple")}), merged)  # another kind
    assert not covered(frozenset({VSeq(frozenset({VConst("s1")}), "list", (frozenset({VConst("s1")}),))}), merged)

    solver, table, rounds = Solver(), {}, []

    def back_and_forth() -> frozenset:
        seen = solver.solve(table, "k", back_and_forth, frozenset(), join_values, same=covered,
                            unsettled=unsettled_values, widen=widen_cycle)
        rounds.append(seen)
        return frozenset(lists[:3]) if len(seen) == 1 else frozenset(lists)  # fewer read from the merged one

    got = solver.solve(table, "k", back_and_forth, frozenset(), join_values, same=covered,
                       unsettled=unsettled_values, widen=widen_cycle)
    assert solver.unsettled == 0 and got == merged and len(rounds) < 4


def test_nested_cycles_cost_the_outer_rounds_not_their_product() -> None:
    # each entry grows from itself (the head of its own cycle) and reads the next; the last
    # reads the first: ten heads nested one inside the other, as transformers' config classes
    # reach each other's `default_config_fields`. Settling each inner head anew in every round
    # of the one below it cost 7,038 computations here (the rounds multiply); one round per
    # outer round with seeds costs under 100.
    n = 10
    deps = {i: [(i + 1) % n] for i in range(n)}
    shift = {i: [i] for i in range(n)}
    want = _least(n, deps, shift)
    system = _System(deps, shift)
    for i in range(n):
        assert _right(system.value(i), want[i])
    assert system.computed <= 2 * n * MAX_ROUNDS, system.computed
    for i in range(n):
        assert _right(settled(system.table, i), want[i])


def test_a_head_inside_a_larger_cycle_settles_with_it() -> None:
    # 1 grows from itself and reads 0, which reads 1: 1's union must be complete when 0 settles,
    # though 1 took one round per round of 0
    deps = {0: [1], 1: [0, 2], 2: []}
    shift = {0: [], 1: [1], 2: []}
    want = _least(3, deps, shift)
    system = _System(deps, shift)
    assert system.value(0) == want[0]
    assert settled(system.table, 1) == want[1]
