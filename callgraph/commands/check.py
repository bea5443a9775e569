"""`callgraph check`: the CI gate. Contracts from config, or the functions a patch touches.

Returns the exit code (0 kept, 1 broken, 2 unknown and none broken under `--unknown fail`);
invalid config and usage errors raise (ConfigError / click.UsageError), which `cli.main` turns
into one line and exit 3. Everything else lives in `callgraph.gate`.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from ..gate.baseline import load_baseline, with_drift, write_baseline
from ..gate.config import Config, Contract, load_config
from ..gate.contracts import Analyses, evaluate
from ..gate.frontier import labels_for
from ..gate.junit import write_junit
from ..gate.patch import read_patch, touched_functions
from ..gate.report import render_github, render_json, render_text
from ..gate.results import exit_code
from ..exit_codes import ExitCode
from .common import max_file_option, parse_binds


@click.command("check")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Config file (INI like setup.cfg, or a .toml); default: ./setup.cfg "
                   "[callgraph], else ./pyproject.toml [tool.callgraph].")
@click.option("--contract", "contract_ids", multiple=True, metavar="ID",
              help="Check only this contract (repeatable).")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Write a JUnit XML report.")
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Accepted witness paths (JSON); kept contracts whose path moved are drifted.")
@click.option("--update-baseline", is_flag=True, help="Write this run's paths to the baseline.")
@click.option("--fail-on-drift", is_flag=True, default=None, help="A drifted path fails (exit 1).")
@click.option("--unknown", type=click.Choice(["fail", "warn"]), default=None,
              help="An unknown verdict fails with exit 2 (default) or only warns.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default=None,
              help="Report format (github: text plus ::error annotations).")
@click.option("--patch", "patch_file", type=click.Path(dir_okay=False),
              help="A unified diff against the tree: every function it touches must be reached.")
@click.option("--entry", "entries", multiple=True, metavar="NAME",
              help="Entry point for --patch (repeatable); default: the config's entries.")
@click.option("--root", "roots", multiple=True, metavar="DIR",
              help="Source root (repeatable); overrides the config's roots.")
@click.option("--package", default=None, help="Analyse an installed package.")
@click.option("--bind", "binds", multiple=True, metavar="FACTORY=CLASS",
              help="Resolve a factory to a class (repeatable); overrides the config's bindings.")
@click.option("--model-config", metavar="PATH",
              help="A checkpoint's config.json (or its folder); overrides the config's model_config.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Cache folder (default $XDG_CACHE_HOME/callgraph).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the analysis cache.")
@max_file_option
def check(config_path, contract_ids, junit_xml, baseline, update_baseline, fail_on_drift, unknown,
          fmt, patch_file, entries, roots, package, binds, model_config, cache_dir, no_cache) -> int:
    """Check call-path contracts (or a patch's touched functions) for CI."""
    overrides = {
        "roots": tuple(str(Path(r).resolve()) for r in roots),
        "package": package, "bindings": _binds(binds), "entries": tuple(entries),
        "model_config": str(Path(model_config).resolve()) if model_config else None,
        "unknown": unknown, "format": fmt, "fail_on_drift": fail_on_drift,
        "baseline": Path(baseline) if baseline else None,
    }
    cfg = load_config(config_path, Path.cwd(), overrides, required=patch_file is None)
    max_mb = click.get_current_context().meta.get("callgraph.max_file_mb") or cfg.max_file_mb
    analyses = Analyses(cache_dir=cache_dir, use_cache=not no_cache,
                        **({"max_file_mb": max_mb} if max_mb else {}))
    notes: list[str] = []
    unchecked: list[str] = []
    if patch_file is not None:
        if contract_ids or update_baseline or baseline:
            raise click.UsageError("--patch checks the patch's functions only; it takes no "
                                   "--contract, --baseline or --update-baseline")
        cfg = replace(cfg, baseline=None)
        contracts, notes, unchecked = _patch_contracts(cfg, Path(patch_file), analyses)
    else:
        contracts = _select(cfg, contract_ids)
    old = {}
    if cfg.baseline is not None:
        old = load_baseline(cfg.baseline, missing_ok=update_baseline)
    elif update_baseline:
        raise click.UsageError("--update-baseline needs --baseline FILE (or baseline = in config)")
    results = evaluate(contracts, analyses, cfg.max_seconds, old)
    if old:
        results = with_drift(results, old)
    code = exit_code(results, cfg.unknown, cfg.fail_on_drift)
    patch = patch_file is not None
    failure = None
    if patch and code == ExitCode.OK and (not results or unchecked):
        code = int(ExitCode.NOT_CHECKED)
        failure = _not_checked(results, unchecked)
    if cfg.format == "json":
        click.echo(render_json(results, code, patch, notes + ([failure] if failure else [])))
    elif cfg.format == "github":
        click.echo(render_github(results, cfg.unknown, cfg.fail_on_drift, patch, notes))
    else:
        click.echo(render_text(results, patch, notes))
    if failure and cfg.format != "json":
        click.echo(f"::error::callgraph: {failure}" if cfg.format == "github" else failure)
    if junit_xml:
        write_junit(Path(junit_xml), results, cfg.unknown, cfg.fail_on_drift, patch)
    if update_baseline:
        kept = {cid: hops for cid, hops in old.items() if cid not in {c.id for c in contracts}}
        write_baseline(cfg.baseline, results, kept)
        click.echo(f"baseline written: {cfg.baseline}", err=True)
    return code


def _binds(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(parse_binds(values).items()))


def _select(cfg: Config, ids: tuple[str, ...]) -> list[Contract]:
    if not cfg.contracts:
        raise click.UsageError(f"{cfg.source}: no contracts (add [callgraph:contract:<id>] "
                               f"sections or [tool.callgraph.contracts.<id>] tables)")
    by_id = {c.id: c for c in cfg.contracts}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise click.UsageError(f"--contract {', '.join(missing)}: no such contract in "
                               f"{cfg.source} (known: {', '.join(by_id)})")
    return [by_id[i] for i in ids] if ids else list(cfg.contracts)


def _patch_contracts(cfg: Config, patch_file: Path, analyses: Analyses):
    """One expected-reached contract per touched function, from any of the entries."""
    if not cfg.entries:
        raise click.UsageError("--patch needs --entry NAME (or entries = in the [callgraph] config)")
    changes = read_patch(patch_file)
    an = analyses.get(cfg.scope)
    found = touched_functions(changes, an, Path.cwd())
    touched = found.functions
    where = f"{cfg.source.name} [callgraph]" if cfg.source else "command line"
    contracts = []
    labels = labels_for(an, touched)
    for qualname, sites in touched.items():
        lines = ", ".join(sites)
        contracts.append(Contract(
            id=labels[qualname], name=f"touched at {lines}",
            entries=cfg.entries, target=qualname, expect="reached", scope=cfg.scope, where=where))
    return contracts, found.notes + [f"not checked: {u}" for u in found.unchecked], found.unchecked


def _not_checked(results, unchecked: list[str]) -> str:
    """Why a patch run that proved nothing wrong still fails (exit 5): a gate that checked
    nothing, or skipped part of the patch, must not read as a pass."""
    if not results:
        return ("FAILED: 0 functions checked: the patch touches no function of the analysed tree "
                "(its paths are not under the roots, or its hunks are not in the files); exit 5")
    return f"FAILED: {len(unchecked)} part(s) of the patch could not be checked (notes above); exit 5"
