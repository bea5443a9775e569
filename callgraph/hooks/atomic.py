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
KICK_BYTES = 64 << 20   # start writeback every this many bytes, so the disk never waits for fsync


class _Kicking:
    """A file wrapper that starts the kernel's writeback as it goes.

    Left alone, Linux keeps gigabytes dirty in the page cache and the disk idles until `fsync`;
    `posix_fadvise(DONTNEED)` starts writing back what is dirty without waiting for it, so the
    disk works while the next bytes are produced, and the dump does not crowd the page cache.
    """

    def __init__(self, f):
        self._f, self._since = f, 0

    def write(self, data) -> int:
        n = self._f.write(data)
        self._since += n
        if self._since >= KICK_BYTES and hasattr(os, "posix_fadvise"):
            self._f.flush()
            os.posix_fadvise(self._f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            self._since = 0
        return n

    def flush(self) -> None:
        self._f.flush()

    def fileno(self) -> int:
        return self._f.fileno()

    def tell(self) -> int:
        return self._f.tell()


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> int:
    """Write through `write(f)` to a temporary name, fsync, rename over `path`; returns bytes."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(_Kicking(f))
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


# torch.save reports a failed write (a full disk, a lost mount) as a RuntimeError from its zip
# writer, never as the OSError underneath; these are the words it uses.
_TORCH_WRITE_FAILED = ("PytorchStreamWriter failed", "file write failed", "inline_container")


def atomic_torch_save(path: Path, data) -> int:
    """`torch.save(data)` to `path` the crash-safe way; a failed write is an OSError (ENOSPC
    where the disk is full), so the command says so in one line instead of an internal error."""
    import errno

    import torch

    def save(f):
        try:
            torch.save(data, f)
        except RuntimeError as exc:
            if not any(words in str(exc) for words in _TORCH_WRITE_FAILED):
                raise
            full = _free_bytes(Path(path).parent) == 0
            raise OSError(errno.ENOSPC if full else errno.EIO,
                          "no space left on device" if full else f"write failed ({exc})",
                          str(path)) from None
    return atomic_write(path, save)


def _free_bytes(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize
