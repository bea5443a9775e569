"""Hand the C allocator's free pages back to the system (glibc's `malloc_trim`).

A whole-tree export drops its per-context memos every `FORGET_ABOVE` entries (explore.py). The
dict and set tables over 512 bytes among them live in glibc's heap (pymalloc keeps the small
objects), and glibc keeps the pages of freed chunks inside its heap resident: on transformers'
cold export, 266 MB free of a 544 MB heap at the end of pass one, all of it counted in the
peak RSS. `malloc_trim(0)` gives those pages back (`madvise`); the chunks stay in glibc's free
lists, so what is allocated next, and nothing the analysis computes, changes. A call takes a
few milliseconds. Where there is no `malloc_trim` (macOS, musl) `release` does nothing.

`keep_until_exit`: the console entry point leaves with `os._exit` (cli.py), skipping the
interpreter's teardown, but a command's analysis was freed before that, object by object, as the
command returned: 6-7 CPU s after transformers' export was written. Under the entry point
(`skip_teardown`) a command's analysis and result are held until the process ends instead.
"""
from __future__ import annotations

import sys

_TRIM: list = []  # [the C function, or None]: looked up on the first call, not at import
_KEPT: list | None = None  # what keep_until_exit holds; None: not under the entry point


def skip_teardown() -> None:
    """Called by the console entry point, which ends with `os._exit`: from now on
    `keep_until_exit` holds what it is given (a library caller, or a test calling `cli.main`,
    frees it as usual)."""
    global _KEPT
    if _KEPT is None:
        _KEPT = []


def keep_until_exit(*objs) -> None:
    """Hold `objs` until the process ends, when it ends with `os._exit` (skip_teardown)."""
    if _KEPT is not None:
        _KEPT.extend(objs)


def release() -> None:
    """Return the C heap's free pages to the system, where the C library can."""
    if not _TRIM:
        _TRIM.append(_malloc_trim())
    trim = _TRIM[0]
    if trim is not None:
        trim(0)


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError, ImportError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
