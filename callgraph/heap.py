"""Hand the C allocator's free pages back to the system (glibc's `malloc_trim`).

A whole-tree export drops its per-context memos every `FORGET_ABOVE` entries (explore.py). The
dict and set tables over 512 bytes among them live in glibc's heap (pymalloc keeps the small
objects), and glibc keeps the pages of freed chunks inside its heap resident: on transformers'
cold export, 266 MB free of a 544 MB heap at the end of pass one, all of it counted in the
peak RSS. `malloc_trim(0)` gives those pages back (`madvise`); the chunks stay in glibc's free
lists, so what is allocated next, and nothing the analysis computes, changes. A call takes a
few milliseconds. Where there is no `malloc_trim` (macOS, musl) `release` does nothing.
"""
from __future__ import annotations

import sys

_TRIM: list = []  # [the C function, or None]: looked up on the first call, not at import


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
