"""Crash-safe file writes: temporary name, fsync, rename, fsync the folder.

A reader (or a resumed run) then sees either no file or a whole one, never a torn sample: a killed
writer leaves only a `.tmp-` file, which `clean_temps` removes on the next run.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, BinaryIO

TMP_MARK = ".tmp-"


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> int:
    """Write through `write(f)` to a temporary name, fsync, rename over `path`; returns bytes."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)
    return size


def atomic_json(path: Path, data) -> int:
    text = json.dumps(data, indent=2, sort_keys=True).encode()
    return atomic_write(path, lambda f: f.write(text))


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def clean_temps(root: Path) -> int:
    """Remove what killed writers left behind; returns how many files went."""
    n = 0
    for p in Path(root).rglob(f"*{TMP_MARK}*"):
        if p.is_file():
            p.unlink()
            n += 1
    return n
