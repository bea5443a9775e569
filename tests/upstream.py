"""Pinned upstream wheels for the real cases, fetched once and unpacked outside the repo.

`fetch("sglang==0.5.23")` runs `pip download --no-deps` into the cache, unzips the wheel into
`<cache>/<name>-<version>/` (to a temporary folder first, then renamed, so a killed run never
leaves a half-unpacked tree) and returns that folder. Nothing is imported from it: the analyzer
only reads the source.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


class RegistryUnavailable(RuntimeError):
    """pip could not reach the package registry (offline machine, proxy, outage)."""


_OFFLINE_HINTS = ("Could not find a version", "No matching distribution", "Failed to establish",
                  "Network is unreachable", "Temporary failure in name resolution",
                  "Connection refused", "ProxyError", "timed out", "Max retries")


def cache_dir() -> Path:
    if os.environ.get("CALLGRAPH_TEST_CACHE"):
        return Path(os.environ["CALLGRAPH_TEST_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "callgraph-tests"


def _split(spec: str) -> tuple[str, str]:
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", spec.strip())
    if not match:
        raise ValueError(f"pin an exact version, e.g. name==1.2.3: {spec!r}")
    return match.group(1), match.group(2)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _find_wheel(wheels: Path, name: str, version: str) -> Path | None:
    prefix = f"{_normal(name)}-{version}-"
    for wheel in sorted(wheels.glob("*.whl")):
        if _normal(wheel.name.split("-", 1)[0]) + "-" + wheel.name.split("-")[1] + "-" == prefix:
            return wheel
    return None


def _pip_download(spec: str, dest: Path, *flags: str, found) -> None:
    """`pip download --no-deps` into dest; RegistryUnavailable when offline, else a clear error."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", *flags,
         "--disable-pip-version-check", "-q", spec, "-d", str(dest)],
        capture_output=True, text=True)
    if proc.returncode != 0 or found() is None:
        message = (proc.stderr or proc.stdout).strip().splitlines()
        last = message[-1] if message else f"pip exited {proc.returncode}"
        if any(hint in (proc.stderr + proc.stdout) for hint in _OFFLINE_HINTS):
            raise RegistryUnavailable(f"cannot download {spec}: {last}")
        raise RuntimeError(f"pip download {spec} failed: {last}")


class _Locked:
    """Holds `<cache>/.lock` (flock): two test workers fetching one wheel on a fresh cache
    download it once, not into one file at the same time."""

    def __init__(self, root: Path):
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / ".lock"

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def fetch(spec: str) -> Path:
    """Return the unpacked folder of the wheel pinned by `spec` (`name==version`)."""
    name, version = _split(spec)
    root = cache_dir()
    target = root / f"{_normal(name)}-{version}"
    if target.is_dir():
        return target
    with _Locked(root):
        return _fetch(root, target, spec, name, version)


def _fetch(root: Path, target: Path, spec: str, name: str, version: str) -> Path:
    if target.is_dir():   # another worker fetched it while this one waited
        return target
    wheels = root / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    wheel = _find_wheel(wheels, name, version)
    if wheel is None:
        _pip_download(spec, wheels, "--only-binary=:all:", found=lambda: _find_wheel(wheels, name, version))
        wheel = _find_wheel(wheels, name, version)
    def unzip(tmp: Path) -> Path:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp)
        return tmp

    return _unpack_atomically(root, target, unzip)


def _unpack_atomically(root: Path, target: Path, extract) -> Path:
    """Unpack into a temporary folder beside target (`extract(tmp)` returns the folder to keep),
    then rename it into place, so a killed run never leaves a half-unpacked tree."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    try:
        src = extract(tmp)
        try:
            src.rename(target)
        except OSError:
            if not target.is_dir():  # not a concurrent run that won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


if __name__ == "__main__":  # python3 tests/upstream.py sglang==0.5.23 ...
    for arg in sys.argv[1:]:
        print(fetch(arg))


def fetch_sdist(spec: str) -> Path:
    """Return the unpacked folder of the source distribution pinned by `spec` (`name==version`).

    For upstream test data that ships only in the sdist (PyCG's micro-benchmark). Cached like the
    wheels: `<cache>/sdists/` holds the archive, `<cache>/<name>-<version>-sdist/` its contents.
    """
    name, version = _split(spec)
    root = cache_dir()
    target = root / f"{_normal(name)}-{version}-sdist"
    if target.is_dir():
        return target
    with _Locked(root):
        return _fetch_sdist(root, target, spec, name, version)


def _fetch_sdist(root: Path, target: Path, spec: str, name: str, version: str) -> Path:
    import tarfile

    if target.is_dir():
        return target
    sdists = root / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)

    def find() -> Path | None:
        for archive in sorted(sdists.glob("*.tar.gz")):
            stem = archive.name[: -len(".tar.gz")]
            got_name, _, got_version = stem.rpartition("-")
            if _normal(got_name) == _normal(name) and got_version == version:
                return archive
        return None

    archive = find()
    if archive is None:
        _pip_download(spec, sdists, "--no-binary", ":all:", found=find)
        archive = find()
    def untar(tmp: Path) -> Path:
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(tmp)
        inner = [p for p in tmp.iterdir() if p.is_dir()]
        return inner[0] if len(inner) == 1 else tmp

    return _unpack_atomically(root, target, untar)
