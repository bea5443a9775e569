"""`callgraph reach ENTRY TARGET`: prove (or refute) that ENTRY reaches TARGET."""
from __future__ import annotations

import json
from pathlib import Path

import click


@click.command()
@click.argument("entry")
@click.argument("target")
@click.option("--root", "roots", multiple=True, metavar="DIR",
              help="Source tree to analyse (repeatable); default: the current folder.")
@click.option("--package", metavar="NAME", help="Analyse an installed package's folder.")
@click.option("--bind", "binds", multiple=True, metavar="FACTORY=CLASS",
              help="What a factory returns, e.g. AutoModel.from_config=LlamaModel (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the proof as JSON.")
@click.option("--all-paths", is_flag=True, help="Explore the whole closure and report every path.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), metavar="N",
              help="Stop exploring after N seconds (the verdict is then unknown unless reached).")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Cache folder (default $XDG_CACHE_HOME/callgraph).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the on-disk cache.")
@click.option("--dot", "dot_out", metavar="FILE", help="Also draw the proof: FILE.dot, FILE.svg or FILE.png.")
def reach(entry, target, roots, package, binds, as_json, all_paths, max_seconds, cache_dir, no_cache, dot_out) -> int:
    """Does ENTRY reach TARGET? Exit 0 reached, 1 unreachable, 2 unknown, 3 error."""
    from ..api import Analysis
    from ..cli import ExitCode
    from ..output.text import proof_text
    from .graph import parse_binds

    if dot_out:
        from ..render import output_format

        output_format(Path(dot_out))  # a bad suffix or missing Graphviz fails before the analysis
    analysis = Analysis(roots=list(roots), package=package, binds=parse_binds(binds), cache_dir=cache_dir,
                        use_cache=not no_cache, progress=lambda line: click.echo(f"callgraph: {line}", err=True))
    proof = analysis.reach(entry, target, all_paths=all_paths, max_seconds=max_seconds)
    if dot_out:
        from ..render import render_proof_file

        render_proof_file(proof, analysis, Path(dot_out))
    if as_json:
        click.echo(json.dumps(proof.to_json(), indent=2))
    else:
        click.echo(proof_text(proof, set(analysis.project.classes)))
    return int({"reached": ExitCode.REACHED, "unreachable": ExitCode.UNREACHABLE,
                "unknown": ExitCode.UNKNOWN}[proof.verdict.value])

