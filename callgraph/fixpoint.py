"""Memo tables that stay right through recursion: what is worked out inside a cycle is kept only
once the cycle has settled.

The evaluator's memo tables double as recursion guards: an entry in progress reads as a
stand-in (`bottom`: empty values, a dispatch with no target), so recursive and mutually
recursive code in the analysed tree terminates. An entry worked out from such a read is
incomplete. Kept for good, it was wrong for every later reader: `f(n) -> g(n - 1) -> f(...)`
read `f` as empty while `f` was in progress, so `g`'s return value lacked what `f` returns, and a
later `g(...)(x)` missed a callee with nothing unresolved: a false "unreachable" (fixtures
`recursion_*`). Which entry met the guard depended on which was asked first, so the answers
also depended on evaluation order.

`Solver` keeps a stack of the entries in progress (frames) and, for each, the lowest frame below
it whose in-progress stand-in it read, directly or through what it read:
- an entry that read only finished entries is final: kept for good;
- an entry whose own stand-in was read while it was worked out (the head of a cycle) is worked
  out again, its stand-in now the union of what it has found, until that union stops growing
  (widened past `WIDEN_AFTER` rounds, so that what would grow without end settles; past
  `MAX_ROUNDS` the value gets `unsettled` added: unknown, never missing);
- an entry that read the stand-in of a frame below it is provisional: kept only until that
  frame is worked out again or finishes (then it is dropped, or kept for good once the frame has
  settled, since every read in the last round saw the settled value);
- a head that is itself provisional (a cycle inside a larger one still in progress) is worked
  out once per round of the larger cycle, not to its own fixpoint: if its union grew, the frame
  below it that it read is marked to go round again, and when it is dropped its union stays
  behind as a seed, the stand-in it starts from next time. Only the lowest frame of a cycle
  goes round, until neither its own value nor any head inside it grows, so nested cycles cost
  the rounds of the outer one, not their product (transformers' config classes reach each
  other's `default_config_fields` through `sub_configs_defaults` eight frames deep: the export
  stalled there when every inner head settled anew in each outer round).
Tables marked `conservative` have a stand-in that over-approximates (a branch not known dead,
an unknown), so reading it makes nothing incomplete: only their own reads are tracked.

One solver serves all the tables of one evaluator: a cycle may run through a name, a call's
dispatch, a return value and a class attribute in turn.
"""
from __future__ import annotations

from typing import Callable

# Rounds a cycle's head is worked out before its value is given up as unsettled (each round
# grows the union it reads; most of real code's cycles settle in two or three).
MAX_ROUNDS = 8
# Rounds after which a cycle's stand-in is widened (values.widen_cycle).
WIDEN_AFTER = 2

_MISSING = object()
_NO_FRAME = 1 << 62


class _Frame:
    __slots__ = ("idx", "low", "read", "dirty", "start", "to")

    def __init__(self, idx: int, start: int):
        self.idx = idx
        self.low = _NO_FRAME  # the lowest frame below this one whose stand-in it depends on
        self.read = False     # its own stand-in was read, by it or by what it worked out
        self.dirty = False    # a cycle inside it has not settled: it must go round again
        self.start = start    # the solver's log length when it was pushed
        self.to: _Frame | None = None  # finished provisional: what depended on it depends on this


class _Pending:
    """A table's entry while it is worked out: its frame and the stand-in readers see."""

    __slots__ = ("frame", "partial", "conservative")

    def __init__(self, frame: _Frame, partial, conservative: bool):
        self.frame = frame
        self.partial = partial
        self.conservative = conservative


class _Provisional:
    """An entry worked out from the stand-in of `owner` (the lowest such frame) and maybe of
    frames above it, all still in progress. `seed`: for the head of a cycle of its own, the
    `_Seed` of the union its rounds reached (left in its place when it is dropped), else None."""

    __slots__ = ("owner", "value", "seed")

    def __init__(self, owner: _Frame, value, seed):
        self.owner = owner
        self.value = value
        self.seed = seed


class _Seed:
    """A dropped head's last union and the rounds it took: reads as missing; worked out again,
    the head's first stand-in is this instead of `bottom` (see `Solver.compute`)."""

    __slots__ = ("value", "rounds")

    def __init__(self, value, rounds: int):
        self.value = value
        self.rounds = rounds


class Solver:
    """The frames of one evaluator's memo tables (see the module's docstring)."""

    __slots__ = ("stack", "log", "rounds", "unsettled")

    def __init__(self):
        self.stack: list[_Frame] = []
        # (table, key) of each provisional entry, in the order they were made: what a frame
        # made while in progress is the log past its `start` (dropped when it goes round again)
        self.log: list = []
        self.rounds = 0      # rounds worked out again, for the figures (benchmarks)
        self.unsettled = 0   # heads given up after MAX_ROUNDS

    def reset(self) -> None:
        """Forget the frames (after an interrupted computation; the tables are dropped too)."""
        self.stack.clear()
        self.log.clear()

    def read(self, table: dict, key):
        """`table[key]` as a memo read: the entry, a stand-in or a provisional value (recording
        that the reader depends on that frame), or `MISSING`."""
        hit = table.get(key, _MISSING)
        cls = hit.__class__
        if cls is _Pending:
            if not hit.conservative:
                hit.frame.read = True
                self._depends_on(hit.frame)
            return hit.partial
        if cls is _Provisional:
            owner = hit.owner
            if owner.to is not None:  # finished, itself provisional: its owner's, still in progress
                while owner.to is not None:
                    owner = owner.to
                hit.owner = owner
            self._depends_on(owner)
            return hit.value
        if cls is _Seed:
            return _MISSING
        return hit

    def _depends_on(self, frame: _Frame) -> None:
        """The frame on top read `frame`'s stand-in, or what was worked out from it: it is
        provisional on `frame` unless it is `frame` itself."""
        top = self.stack[-1]
        if frame is not top and frame.idx < top.low:
            top.low = frame.idx

    def solve(self, table: dict, key, compute: Callable, bottom, join: Callable | None = None,
              same: Callable | None = None, unsettled: Callable | None = None, conservative: bool = False,
              widen: Callable | None = None):
        """`table[key]`, worked out by `compute()` if not there (see the module's docstring).
        `bottom`: what a read in progress sees first; `join(a, b)`: a value holding both (the
        stand-in of the next round); `same(a, b)`: whether a round added nothing;
        `unsettled(v)`: `v` marked as not settled; `widen(v)`: `v` holding all it holds, from a
        finite set of values (applied past WIDEN_AFTER rounds, so that what grows without end,
        such as the name of `x.to().to()...`, settles). A `conservative` table's stand-in stays
        `bottom` and is never worked out again."""
        hit = self.read(table, key)
        if hit is not _MISSING:
            return hit
        return self.compute(table, key, compute, bottom, join, same, unsettled, conservative, widen)

    def compute(self, table: dict, key, compute: Callable, bottom, join=None, same=None, unsettled=None,
                conservative: bool = False, widen=None):
        """Work out `table[key]` (not there: `read` said so)."""
        stack, log = self.stack, self.log
        frame = _Frame(len(stack), len(log))
        stack.append(frame)
        rounds = 0
        prior = table.get(key)
        if prior.__class__ is _Seed and join is not None and not conservative:
            bottom, rounds = prior.value, prior.rounds  # a round of a cycle it lies in, again
        pending = _Pending(frame, bottom, conservative)
        table[key] = pending
        give_up = False
        try:
            while True:
                joined = False  # this round's value is a union of rounds (a head's)
                value = compute()
                if conservative or not (frame.read or frame.dirty):
                    break
                joined = True
                grown = join(pending.partial, value) if join is not None else value
                if rounds >= WIDEN_AFTER and widen is not None:
                    grown = widen(grown)
                if not frame.dirty and (same or _equal)(grown, pending.partial):
                    value = pending.partial
                    break
                rounds += 1
                self.rounds += 1
                if rounds >= MAX_ROUNDS:
                    self.unsettled += 1
                    value = unsettled(grown) if unsettled is not None else grown
                    give_up = True
                    break
                if join is not None and frame.low < frame.idx:
                    # inside a larger cycle still in progress: only that cycle's lowest frame
                    # goes round again, and this entry with it, from what it has found so far
                    value = grown
                    stack[frame.low].dirty = True
                    break
                # again, reading what was found so far; what was worked out from the old
                # stand-in goes
                pending.partial = grown
                _drop(log, frame.start)
                frame.read = False
                frame.dirty = False
                frame.low = _NO_FRAME
        except BaseException:
            if stack and stack[-1] is frame:
                stack.pop()
            if table.get(key) is pending:
                del table[key]
            _drop(log, frame.start)
            raise
        stack.pop()
        if give_up:  # what read the last stand-in missed the last round's growth
            _drop(log, frame.start)
        if frame.low < frame.idx:  # it read a frame below, still in progress: provisional
            owner = stack[frame.low]
            frame.to = owner  # its provisional entries depend on `owner` now
            seed = _Seed(value, rounds) if joined and join is not None else None
            table[key] = _Provisional(owner, value, seed)
            log.append((table, key))
            self._depends_on(owner)
        else:
            table[key] = value
            _keep(log, frame.start)  # all worked out from this frame's settled value
        return value


def _equal(a, b) -> bool:
    return a == b


def _drop(log: list, start: int) -> None:
    for table, key in log[start:]:
        hit = table.get(key)
        if hit.__class__ is _Provisional:
            if hit.seed is None:
                del table[key]
            else:
                table[key] = hit.seed
    del log[start:]


def _keep(log: list, start: int) -> None:
    for table, key in log[start:]:
        hit = table.get(key)
        if hit.__class__ is _Provisional:
            table[key] = hit.value
    del log[start:]


def settled(table: dict, key, default=None):
    """`table[key]` when it is there for good (no frame bookkeeping): for readers outside any
    computation, such as statistics."""
    hit = table.get(key, _MISSING)
    if hit is _MISSING or hit.__class__ in (_Pending, _Provisional, _Seed):
        return default
    return hit


MISSING = _MISSING
