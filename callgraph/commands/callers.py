"""`callgraph callers TARGET` and `callgraph callees ENTRY`: who reaches a function, and what a
function reaches.

`callers` is a question about every function of the tree, so it walks the whole-tree graph
(`Analysis.export()`, cached per file) backwards; `callees` is demand-driven from its entry
(`Analysis.callees`). Both print one name a line, or the graph vocabulary with `--json`.

The whole-tree graph is context-insensitive: a shared helper's edges are the union over all
its callers, so a path through it may be one that `reach` (which binds each call site's own
arguments) does not prove. Every output of `callers` says so, and `--verify` runs `reach` from
each caller and shows its verdict and its path instead (docs/export.md, "callers and reach").
"""
from __future__ import annotations

import json
from dataclasses import replace

import click

from .. import graphquery as gq
from ..model import hop_json
from .common import jobs_option, open_analysis, tree_options

#: The label every unverified `callers` output carries (stderr summary, --paths, --json).
OVER_APPROXIMATION = ("context-insensitive over-approximation: a caller or path here may be "
                      "one that `callgraph reach` does not prove; --verify runs reach on each")


@click.command()
@click.argument("target")
@tree_options
@click.option("--entries-only", is_flag=True, help="Only callers that nobody calls (entry points).")
@click.option("--paths", is_flag=True, help="One shortest witness path from each caller.")
@click.option("--depth", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only callers within N hops (1: direct callers); default: all.")
@click.option("--verify", is_flag=True,
              help="Run `reach CALLER TARGET` on each caller: print its verdict, and with --paths "
                   "the path reach proves (exact, slower).")
@click.option("--json", "as_json", is_flag=True, help="Print the graph vocabulary as JSON.")
@jobs_option
def callers(target, roots, package, binds, model_config, cache_dir, no_cache, entries_only, paths, depth, verify,
            as_json, jobs) -> int:
    """Every function that may reach TARGET (whole-tree graph; --verify proves each)."""
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache, model_config=model_config)
    name = analysis.resolve(target)
    whole = analysis.export(jobs=jobs)
    if name not in {n.name for n in whole.nodes}:  # a function nobody calls and outside the scope
        whole = replace(whole, nodes=whole.nodes + (analysis.node(name),))
    found = gq.callers(whole, name, depth, entries_only)
    proofs = {q: analysis.reach(q, name) for q in found} if verify else {}
    if verify:
        witness = {q: p.path for q, p in proofs.items() if p.path}
    else:
        witness = _paths(gq, whole, name, depth, entries_only) if paths else {}
    if as_json:
        data = gq.callers_view(whole, name, depth, entries_only).to_json()
        data["unresolved_sites"] = len(whole.unresolved)  # of the tree: a caller through one is not listed
        if verify:
            data["verdicts"] = {q: p.verdict.value for q, p in proofs.items()}
        else:
            data["precision"] = "context-insensitive"
            data["note"] = OVER_APPROXIMATION
        if paths:
            data["paths"] = {k: [hop_json(h) for h in v] for k, v in witness.items()}
        click.echo(json.dumps(data, indent=2))
        return 0
    what = f"{len(found)} function(s) may reach {name}" + (" (entry points only)" if entries_only else "")
    if whole.unresolved:  # a caller through one of them is not listed
        what += f" (and {len(whole.unresolved)} unresolved call site(s) in the tree may lead there: `export` lists them)"
    if verify:
        counts = {}
        for p in proofs.values():
            counts[p.verdict.value] = counts.get(p.verdict.value, 0) + 1
        tally = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        click.echo(f"{what}; verified with reach: {tally or 'none'}", err=True)
    else:
        click.echo(f"{what}; {OVER_APPROXIMATION}", err=True)
        if paths:  # the paths go to stdout, so the label does too
            click.echo(f"# {OVER_APPROXIMATION}")
    for q in found:
        click.echo(f"{q}   [{proofs[q].verdict.value}]" if verify else q)
        for h in witness.get(q, ()) if paths else ():
            click.echo(f"  → {h.callee}   {h.site}   [{h.rule}]")
    return 0


def _paths(gq, whole, name, depth, entries_only):
    keep = set(gq.callers(whole, name, depth, entries_only))
    return {k: v for k, v in gq.witness_paths(whole, name, depth).items() if k in keep}


@click.command()
@click.argument("entry")
@tree_options
@click.option("--depth", type=click.IntRange(min=0), default=None, metavar="N",
              help="Calls followed from ENTRY, in hops; default: everything reachable.")
@click.option("--json", "as_json", is_flag=True, help="Print the graph vocabulary as JSON.")
def callees(entry, roots, package, binds, model_config, cache_dir, no_cache, depth, as_json) -> int:
    """Every function reachable from ENTRY (within --depth hops)."""
    analysis = open_analysis(roots, package, binds, cache_dir, no_cache, model_config=model_config)
    view = analysis.callees(analysis.resolve(entry), depth)
    if as_json:
        click.echo(json.dumps(view.to_json(), indent=2))
        return 0
    names = sorted(gq.reachable(view, view.entry, depth) - {view.entry})
    click.echo(f"{len(names)} function(s) reachable from {view.entry}"
               + (f" within {depth} hop(s)" if depth is not None else "")
               + f"; {len(view.unresolved)} unresolved call site(s)", err=True)
    for q in names:
        click.echo(q)
    return 0
