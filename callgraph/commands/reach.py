"""`callgraph reach ENTRY TARGET`: prove (or refute) that ENTRY reaches TARGET."""
from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ..errors import BindingError
from ..exit_codes import ExitCode
from ..output.text import proof_text
from .common import open_analysis, tree_options


@click.command()
@click.argument("names", nargs=-1, metavar="[ENTRY] TARGET")
@tree_options
@click.option("--json", "as_json", is_flag=True, help="Print the proof as JSON.")
@click.option("--all-paths", is_flag=True, help="Explore the whole closure and report every path.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), metavar="N",
              help="Stop exploring after N seconds (the verdict is then unknown unless reached).")
@click.option("--dot", "dot_out", metavar="FILE", help="Also draw the proof: FILE.dot, FILE.svg or FILE.png.")
@click.option("--arg", "entry_args", multiple=True, metavar="NAME=TYPE",
              help="What ENTRY is called with: its parameter NAME holds a TYPE, e.g. x=torch.Tensor "
                   "(repeatable); the answer holds under that premise and says so.")
def reach(names, roots, package, binds, model_config, cache_dir, no_cache, as_json, all_paths, max_seconds,
          dot_out, entry_args) -> int:
    """Does ENTRY reach TARGET? Exit 0 reached, 1 unreachable, 2 unknown, 3 error, 4 bug.
    With --model-config, ENTRY may be left out: the class of the config's architecture."""
    if len(names) not in (1, 2):
        raise click.UsageError("expected ENTRY TARGET (ENTRY may be left out with --model-config)")
    started = time.perf_counter()  # --max-seconds counts from here: listing the tree too
    typed = {}
    for item in entry_args:
        name, sep, tp = item.partition("=")
        if not sep or not name.strip().isidentifier() or not tp.strip():
            raise BindingError(f"--arg {item!r}: expected NAME=TYPE, e.g. x=torch.Tensor")
        typed[name.strip()] = tp.strip()
    entry, target = names if len(names) == 2 else (None, names[0])
    if dot_out:
        from ..render import output_format  # pydot and Graphviz only when a picture is asked for

        output_format(Path(dot_out))  # a bad suffix or missing Graphviz fails before the analysis
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache, model_config=model_config, reuse=True)
    if entry is None:
        if analysis.model_config is None:
            raise click.UsageError("expected ENTRY TARGET (ENTRY may be left out with --model-config)")
        entry = analysis.entry_of_config()
    proof = analysis.reach(entry, target, all_paths=all_paths, max_seconds=max_seconds, started=started,
                           args=typed)
    if dot_out:
        from ..render import render_proof_file

        render_proof_file(proof, analysis, Path(dot_out))
    if as_json:
        click.echo(json.dumps(proof.to_json(), indent=2))
    else:
        click.echo(proof_text(proof, analysis.classes_named_in(proof)))
    return int({"reached": ExitCode.REACHED, "unreachable": ExitCode.UNREACHABLE,
                "unknown": ExitCode.UNKNOWN}[proof.verdict.value])

