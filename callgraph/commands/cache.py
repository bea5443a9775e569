"""`callgraph cache info` and `callgraph cache clear`: where the analysis cache is, what it
holds, and a way to empty it without knowing its layout (cache.py)."""
from __future__ import annotations

import click

from ..cache import Cache

_DIR = click.option("--cache-dir", type=click.Path(file_okay=False),
                    help="Cache folder (default $XDG_CACHE_HOME/callgraph).")


@click.group("cache")
def cache() -> None:
    """Show or clear the on-disk analysis cache."""


@cache.command("info")
@_DIR
def info(cache_dir) -> int:
    """Location, size and records of the cache, per engine version."""
    got = Cache(cache_dir).info()
    click.echo(f"location: {got.location}")
    click.echo(f"size: {_mb(got.bytes)}")
    if not got.engines:
        click.echo("records: none")
    for engine, kinds in got.engines.items():
        mark = " (this version)" if engine == got.engine else " (older version: `cache clear` removes it)"
        rows = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        click.echo(f"records {engine}{mark}: {sum(kinds.values())} ({rows})")
    if got.crash_logs:
        click.echo(f"crash logs: {got.crash_logs} in {got.location / 'crashes'}")
    return 0


@cache.command("clear")
@_DIR
def clear(cache_dir) -> int:
    """Remove every cached record and crash log (nothing else in the folder)."""
    store = Cache(cache_dir)
    files, size = store.clear()
    click.echo(f"removed {files} file(s), {_mb(size)}, from {store.dir}")
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"
