"""`callgraph graph ENTRY -o FILE`: a picture of what ENTRY calls, with a proven path on top.

The neighbourhood comes from `Analysis.callees(entry, depth)`; `--to TARGET` adds a reach proof
whose path is highlighted (drawn even where it runs deeper than `--depth`) and whose blocking
unresolved sites are drawn dashed. The output suffix picks the format; it is checked, with
Graphviz, before the analysis runs so a long analysis is never wasted on an unwritable picture.
Exit 0 once the picture is written, whatever the verdict: `reach` is the command that gates.
"""
from __future__ import annotations

from pathlib import Path

import click

from ..render import output_format, render_graph_file
from .common import open_analysis, tree_options

DEFAULT_DEPTH = 3


@click.command()
@click.argument("entry")
@click.option("--to", "target", metavar="TARGET", help="Highlight the path from ENTRY to TARGET.")
@click.option("--depth", type=click.IntRange(min=0), default=DEFAULT_DEPTH, show_default=True,
              help="Calls drawn from ENTRY, in hops.")
@tree_options
@click.option("--max-nodes", type=click.IntRange(min=1), default=200, show_default=True,
              help="Most nodes drawn; the caption says what was left out.")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Picture to write: FILE.dot, FILE.svg or FILE.png.")
def graph(entry, target, depth, roots, package, binds, model_config, cache_dir, no_cache, max_nodes,
          output) -> int:
    """Draw the calls reachable from ENTRY (to --depth), with the path to --to highlighted."""
    out = Path(output)
    output_format(out)  # bad suffix, missing folder or Graphviz: fail before the analysis
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache, model_config=model_config)
    entry_name = analysis.resolve(entry)
    view = analysis.callees(entry_name, depth)
    proof = analysis.reach(entry_name, analysis.resolve(target)) if target else None
    render_graph_file(view, analysis, out, highlight=proof, max_nodes=max_nodes, depth=depth)
    verdict = f"; {target}: {proof.verdict.value}" if proof else ""
    n = len(view.nodes)
    click.echo(f"wrote {out} ({n} function{'s' if n != 1 else ''} from {view.entry}{verdict})")
    return 0
