"""Pause Python's cyclic garbage collector while an analysis runs.

An analysis of a real tree keeps millions of long-lived objects alive (SGLang's `srt`: 4 million
AST nodes, frozensets of abstract values, memo tables) and makes next to no cyclic garbage. The
collector does not know that: every full collection walks all of them again, and allocating that
many objects triggers one after another. On `srt` this was more than half of a whole-tree export
(142 s with the collector, 60 s without, the same peak memory). Reference counting still frees
what the analysis drops; the collector runs again when the query returns.

Paused by its threshold (`gc.set_threshold(0)`: no automatic collection whatever `gc.enable`
says) as well as by `gc.disable()`: parso loads its cached trees under `gc.disable()` ...
`gc.enable()`, so every Jedi query of the oracle turned the collector back on, and the rest of
the query ran with it (SGLang's Kimi -> Qwen2Model negative: 56 collections, 23 of 148 CPU s).
"""
from __future__ import annotations

import functools
import gc
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def collector_paused(fn: F) -> F:
    """Run `fn` with the cyclic collector off (nested calls leave it to the outermost one)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        threshold = gc.get_threshold()
        if not gc.isenabled() or threshold[0] == 0:
            return fn(*args, **kwargs)
        _pause()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.set_threshold(*threshold)
            gc.enable()

    return wrapper  # type: ignore[return-value]


def paused_until_exit() -> None:
    """Pause the collector for the rest of the process: the console entry point, which ends
    with `os._exit` once its command returns. Turned back on there, the collector's first run
    walked every object the command had made (all of them still in its youngest generation,
    and held to the end: heap.keep_until_exit) only for the process to end: 13.6 CPU s after
    SGLang's Kimi -> Qwen2Model negative."""
    _pause()


def _pause() -> None:
    """Off, and with a zero first threshold, which a library's `gc.enable()` does not undo."""
    gc.disable()
    gc.set_threshold(0, *gc.get_threshold()[1:])
