"""What the analysis commands share: the tree options, --bind parsing, opening the Analysis."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import BindingError
from ..gate.config import tree_scope
from ..roots import MAX_FILE_MB


def tree_options(fn):
    """--root/--package/--bind/--model-config/--cache-dir/--no-cache, shared by every command that
    analyses a tree."""
    for opt in reversed([
        click.option("--root", "roots", multiple=True, metavar="DIR",
                     help="Source tree to analyse (repeatable); default: the current folder."),
        click.option("--package", metavar="NAME",
                     help="Analyse an installed package's folder (with --root: both, as one tree)."),
        click.option("--bind", "binds", multiple=True, metavar="FACTORY=CLASS[,CLASS]",
                     help="What a factory (or a site FILE.py:LINE) builds, e.g. AutoModel.from_config=LlamaModel "
                          "(repeatable; several classes comma-separated)."),
        click.option("--model-config", metavar="PATH",
                     help="A checkpoint's config.json (or its folder): registry factories build what it names."),
        click.option("--cache-dir", type=click.Path(file_okay=False),
                     help="Cache folder (default $XDG_CACHE_HOME/callgraph)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the on-disk cache."),
        max_file_option,
    ]):
        fn = opt(fn)
    return fn


def _keep_max_file_mb(ctx: click.Context, _param, value):
    if value is not None:
        ctx.meta["callgraph.max_file_mb"] = value
    return value


#: --max-file-mb, kept in the click context (no command signature carries it) for open_analysis.
max_file_option = click.option(
    "--max-file-mb", type=click.FloatRange(min=0, min_open=True), metavar="MB", expose_value=False,
    callback=_keep_max_file_mb,
    help=f"Skip (with a warning) source files larger than MB megabytes; default {MAX_FILE_MB:g}, "
         "or max_file_mb in the config.")


def jobs_option(fn):
    """--jobs N: processes a whole-tree analysis resolves in (callgraph/workers.py)."""
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Processes to resolve the whole tree in (forked after parsing).")(fn)


def open_analysis(roots, package, binds, cache_dir, no_cache, quiet: bool = False, model_config=None,
                  reuse: bool = False):
    """The engine loads only here, when a command runs; progress lines go to stderr.

    The tree comes from the working folder's `[callgraph]` / `[tool.callgraph]` settings
    (roots, package, bindings, model_config), each overridden by its option (gate/config.py `tree_scope`).
    `reuse` (`reach`): under `cli.main(analyses=...)`, an Analysis opened before on the same
    tree with the same options is asked again (its files parsed once; every query's inference
    is its own), else the new one is kept there. Outside that, and for every other command, each
    call opens its own."""
    from ..api import Analysis  # here, not above: `--help` and usage errors never load the engine

    say = lambda line: click.echo(f"callgraph: {line}", err=True)  # noqa: E731
    progress = None if quiet else say
    scope, cfg = tree_scope(Path.cwd(), tuple(roots), package, tuple(sorted(parse_binds(binds).items())),
                            model_config)
    if cfg.source is not None and not quiet:
        say(f"settings from {cfg.source}")
    ctx = click.get_current_context(silent=True)
    max_mb = (ctx.meta.get("callgraph.max_file_mb") if ctx else None) or cfg.max_file_mb or MAX_FILE_MB
    if scope.roots and scope.package:
        say(f"analysing package {scope.package} together with "
            f"{', '.join(scope.roots)}: one tree, names resolve in either")
    # --model-config over model_config = (a contract may name its own: gate/config.py Scope)
    model_config = model_config or (Path(scope.model_config) if scope.model_config else None)
    state = ctx.find_root().obj if ctx else None  # cli.main's
    kept = state.get("analyses") if reuse and isinstance(state, dict) else None
    key = (scope, str(model_config or ""), str(cache_dir or ""), no_cache, max_mb)
    an = kept.get(key) if kept is not None else None
    if an is None:
        an = Analysis(roots=list(scope.roots), package=scope.package, binds=dict(scope.binds),
                      model_config=model_config,
                      cache_dir=cache_dir, use_cache=not no_cache, progress=progress, max_file_mb=max_mb)
        if kept is not None:
            kept[key] = an
    an.progress = progress  # this command's (a kept Analysis was opened by an earlier one)
    for factory in an.unmatched_binds():
        say(f"warning: --bind {factory}: no call site in the tree calls {factory} (misspelt?)")
    return an


def parse_binds(binds: tuple[str, ...]) -> dict[str, str]:
    """`("AutoModel.from_config=LlamaModel",)` -> `{"AutoModel.from_config": "LlamaModel"}`."""
    parsed = {}
    for bind in binds:
        factory, sep, cls = bind.partition("=")
        if not sep or not factory.strip() or not cls.strip():
            raise BindingError(f"--bind {bind!r}: expected FACTORY=CLASS[,CLASS...], "
                               "e.g. AutoModel.from_config=LlamaModel")
        parsed[factory.strip()] = cls.strip()
    return parsed
