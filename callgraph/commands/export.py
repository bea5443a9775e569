"""`callgraph export -o FILE`: the call graph of the whole tree, in a format other tools read.

Every function and method of the scope is a node and every resolved edge carries its site and
rule (`Analysis.export()`); the format (`--format`, else FILE's suffix) is one of json (the graph vocabulary of docs/vocabulary.md), pycg
(PyCG's adjacency JSON, for its consumers and its scoring), graphml (networkx) or dot. The file
is written atomically, so a long export that is interrupted leaves any previous file intact.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from .. import heap
from ..output.formats import FORMATS, FormatError, format_for, write_graph
from .common import jobs_option, open_analysis, tree_options


@click.command()
@tree_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="json: the graph vocabulary; pycg: PyCG's adjacency JSON; graphml; dot. "
                   "Default: from FILE's suffix (.json, .graphml, .dot).")
@click.option("-o", "--output", "output", required=True, metavar="FILE", help="File to write.")
@jobs_option
def export(roots, package, binds, model_config, cache_dir, no_cache, fmt, output, jobs) -> int:
    """Write the call graph of the whole tree to FILE."""
    out = Path(output)
    fmt = format_for(out, fmt)  # x.svg would get JSON: refuse before the analysis
    if not out.parent.is_dir():  # fail before a long analysis, not after it
        raise FormatError(f"cannot write {out}: folder {out.parent} does not exist")
    t0 = time.perf_counter()
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache, model_config=model_config)
    view = analysis.export(jobs=jobs)
    heap.keep_until_exit(analysis, view)  # freed by the process's end, not one object at a time
    write_graph(view, out, fmt)
    click.echo(f"callgraph: wrote {out} ({fmt}: {len(view.nodes)} functions, {len(view.edges)} calls, "
               f"{len(view.unresolved)} unresolved sites, {time.perf_counter() - t0:.1f} s)", err=True)
    return 0
