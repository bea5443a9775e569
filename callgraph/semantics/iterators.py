"""`iterator`: the builtins and `itertools` functions that iterate a container hand its
elements back: `enumerate`, `zip`, `reversed`, `itertools.islice`, `itertools.chain`,
`chain.from_iterable`; `range` gives integers.

vLLM's decoder loop is `for idx, layer in enumerate(islice(self.layers, self.start_layer,
self.end_layer), start=...)`: at run time `layer` is each module of `self.layers` between the
bounds, so `layer(...)` runs their `forward`. Without this model the loop variable was an element
of an outside iterator (unknown), and every model's layer call was a blocker.

What these calls give is an iterator (a container value of kind `iterator`) over the elements
of their arguments (every element: bounds and steps given by values are not read, so `islice`
keeps all of them, which over-approximates); the position of each element in `zip`'s and
`enumerate`'s tuples is kept (`for i, (a, b) in enumerate(zip(xs, ys))`). Iterating or
unpacking that iterator records this rule (`infer/sequences.py`); an element of anything these
functions cannot iterate stays what iterating it gives (unknown for an outside object).
"""
from __future__ import annotations

from ..values import VExt, VSeq
from .rule import Call, Outcome, Rule

KIND = "iterator"  # the VSeq kind of what these calls give
INT = VExt("builtins.int()")  # an element of range(): an integer, never a module
NAMES = frozenset({"builtins.enumerate", "builtins.zip", "builtins.reversed", "builtins.range",
                   "itertools.islice", "itertools.chain", "itertools.chain.from_iterable"})


def handles(name: str) -> bool:
    return name in NAMES


class Iterators(Rule):
    """`enumerate`, `zip`, `reversed`, `itertools.islice` / `chain` / `chain.from_iterable` over
    a container give its elements (every one: bounds are not read), with their positions in
    `zip`'s and `enumerate`'s tuples (`for idx, layer in enumerate(islice(self.layers, a, b))`
    calls each layer); `range` gives integers"""

    name = "iterator"
    where = ("semantics/iterators.py", "infer/sequences.py")
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        return call.value.name in NAMES

    def apply(self, call: Call) -> Outcome:
        ev, args, tags, name = call.ev, call.args, call.tags, call.value.name
        if name == "builtins.range":
            return frozenset({VSeq(frozenset({INT}), KIND)})
        if not args.pos and not args.has_star:
            return None  # `zip()`, `enumerate()` with a keyword only: not read here
        iters = [ev.iterate(a, tags) for a in args.pos]
        if args.has_star:  # zip(*rows), chain(*lists): each of the starred values is an iterable
            iters.append(ev.iterate(args.star, tags))
        if name == "builtins.enumerate":
            elems = iters[0]
            return frozenset({_iterator(frozenset({VSeq(elems | {INT}, "tuple", (frozenset({INT}), elems))}))})
        if name == "builtins.zip":
            if args.has_star:  # the tuples' length is not known
                return frozenset({_iterator(frozenset({VSeq(frozenset().union(*iters), "tuple")}))})
            return frozenset({_iterator(frozenset({VSeq(frozenset().union(*iters), "tuple", tuple(iters))}))})
        if name == "itertools.chain":
            return frozenset({_iterator(frozenset().union(*iters))})
        if name == "itertools.chain.from_iterable":
            return frozenset({_iterator(ev.iterate(iters[0], tags))})
        return frozenset({_iterator(iters[0])})  # reversed(xs), islice(xs, ...): xs's elements


def _iterator(elems) -> VSeq:
    return VSeq(frozenset(elems), KIND)


RULE = Iterators()


def elements(v: VSeq, tags: set[str]) -> frozenset:
    """What iterating an iterator these calls gave yields (`infer/sequences.py`)."""
    tags.add(RULE.name)
    return v.elems
