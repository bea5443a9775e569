"""`callgraph export -o FILE`: the call graph of the whole tree, in a format other tools read.

Every function and method of the scope is a node and every resolved edge carries its site and
rule (`Analysis.export()`); the format is one of json (the graph vocabulary of DESIGN.md), pycg
(PyCG's adjacency JSON, for its consumers and its scoring), graphml (networkx) or dot. The file
is written atomically, so a long export that is interrupted leaves any previous file intact.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from ..output.formats import FORMATS, FormatError


def tree_options(fn):
    """--root/--package/--bind/--cache-dir/--no-cache, shared by export, callers and callees."""
    for opt in reversed([
        click.option("--root", "roots", multiple=True, metavar="DIR",
                     help="Source tree to analyse (repeatable); default: the current folder."),
        click.option("--package", metavar="NAME", help="Analyse an installed package's folder."),
        click.option("--bind", "binds", multiple=True, metavar="FACTORY=CLASS",
                     help="What a factory returns, e.g. AutoModel.from_config=LlamaModel (repeatable)."),
        click.option("--cache-dir", type=click.Path(file_okay=False),
                     help="Cache folder (default $XDG_CACHE_HOME/callgraph)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the on-disk cache."),
    ]):
        fn = opt(fn)
    return fn


def open_analysis(roots, package, binds, cache_dir, no_cache, quiet: bool = False):
    """The engine loads only here, when a command runs; progress lines go to stderr."""
    from ..api import Analysis
    from .graph import parse_binds

    progress = None if quiet else (lambda line: click.echo(f"callgraph: {line}", err=True))
    return Analysis(roots=list(roots), package=package, binds=parse_binds(binds), cache_dir=cache_dir,
                    use_cache=not no_cache, progress=progress)


@click.command()
@tree_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True,
              help="json: the graph vocabulary; pycg: PyCG's adjacency JSON; graphml; dot.")
@click.option("-o", "--output", "output", required=True, metavar="FILE", help="File to write.")
def export(roots, package, binds, cache_dir, no_cache, fmt, output) -> int:
    """Write the call graph of the whole tree to FILE."""
    from ..output.formats import write_graph

    out = Path(output)
    if not out.parent.is_dir():  # fail before a long analysis, not after it
        raise FormatError(f"cannot write {out}: folder {out.parent} does not exist")
    t0 = time.perf_counter()
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache)
    view = analysis.export()
    write_graph(view, out, fmt)
    click.echo(f"callgraph: wrote {out} ({fmt}: {len(view.nodes)} functions, {len(view.edges)} calls, "
               f"{len(view.unresolved)} unresolved sites, {time.perf_counter() - t0:.1f} s)", err=True)
    return 0
