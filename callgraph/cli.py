"""The command line: the only place that prints verdicts and exits.

Each subcommand lives in its own module and is loaded only when it runs, so `callgraph reach`
never imports torch (the `dump` command's hook module does) and start-up stays fast.
"""
from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys
import traceback

import click

from . import __version__, heap
from .errors import CallgraphError
from .exit_codes import ExitCode  # noqa: F401  (re-exported: `from callgraph.cli import ExitCode`)
from .gcpause import collector_paused, paused_until_exit
from .seed import reproducible

#: OSErrors that the machine or the user caused (a full disk, a read-only folder, a closed
#: pipe): one line and exit 3, like any bad input. Any other OSError is a bug (exit 4).
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES,
                                errno.EPERM, errno.EFBIG, errno.EPIPE})


# name -> "module:attribute" of a click command; loaded on first use.
SUBCOMMANDS = {
    "reach": "callgraph.commands.reach:reach",
    "graph": "callgraph.commands.graph:graph",
    "check": "callgraph.commands.check:check",
    "dump": "callgraph.hooks.cli:dump",
    "export": "callgraph.commands.export:export",
    "callers": "callgraph.commands.callers:callers",
    "callees": "callgraph.commands.callers:callees",
    "cache": "callgraph.commands.cache:cache",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(name for name in SUBCOMMANDS if _available(name))

    def get_command(self, ctx, name):
        if name not in SUBCOMMANDS or not _available(name):
            return None
        module, attr = SUBCOMMANDS[name].split(":")
        return getattr(importlib.import_module(module), attr)


def _available(name: str) -> bool:
    module = SUBCOMMANDS[name].split(":")[0]
    return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="callgraph")
@click.option("--debug", is_flag=True, envvar="CALLGRAPH_DEBUG",
              help="On an internal error, print the traceback instead of writing it to a log file.")
@click.pass_obj
def cli(state: dict, debug: bool) -> None:
    """Prove how data flows through PyTorch model wrapper hierarchies."""
    state["debug"] = debug


@collector_paused  # the whole command: writing a big graph allocates as much as analysing it
def main(argv: list[str] | None = None, analyses: dict | None = None) -> int:
    """Run the CLI. Library errors become one line and exit 3; anything unexpected becomes one
    line and exit 4 (`crash.py`), so no failure can read as a verdict; Ctrl-C exits 130.

    `analyses`: a dict that an in-process caller keeps between calls (the test suite, which asks
    many `reach` queries of one real tree): `reach` keeps its open Analysis there and a later
    `reach` on the same tree with the same options asks it again instead of parsing the tree
    anew (commands/common.py `open_analysis`). Each query still starts from fresh inference
    (api.py `_new_query`), as `check` already asks its contracts of one Analysis. Only for
    trees whose files do not change while the dict is kept; the console entry point never
    passes one."""
    state = {"debug": bool(os.environ.get("CALLGRAPH_DEBUG")), "analyses": analyses}
    try:
        rv = cli.main(args=argv, prog_name="callgraph", standalone_mode=False, obj=state)
    except CallgraphError as exc:
        click.echo(f"callgraph: error: {exc}", err=True)
        return int(exc.exit_code)
    except click.exceptions.Abort as exc:  # click's wrapper of KeyboardInterrupt and EOFError
        if isinstance(exc.__context__, EOFError):  # we never prompt: a bug, not the user
            return _internal(exc.__context__, argv, state)
        click.echo("callgraph: interrupted", err=True)
        return int(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        return int(ExitCode.ERROR)
    except KeyboardInterrupt:
        click.echo("callgraph: interrupted", err=True)
        return int(ExitCode.INTERRUPTED)
    except OSError as exc:
        if exc.errno not in ENVIRONMENT_ERRNOS:
            return _internal(exc, argv, state)
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"callgraph: error: {where}{exc.strerror or exc}", err=True)
        return int(ExitCode.ERROR)
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into an exit code
        return _internal(exc, argv, state)  # RecursionError and MemoryError included
    if isinstance(rv, int):
        return rv
    return int(ExitCode.OK)


def _internal(exc: BaseException, argv: list[str] | None, state: dict) -> int:
    from .crash import internal_error_line

    if state.get("debug"):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    click.echo(internal_error_line(exc, argv, state.get("debug", False)), err=True)
    return int(ExitCode.INTERNAL)


def entry() -> None:  # pragma: no cover - console script shim
    reproducible()
    heap.skip_teardown()  # a command's analysis is left for os._exit below, not freed first
    paused_until_exit()  # ... and never walked by the collector after the command either
    code = main()
    # Everything is written and closed by now. Skip the interpreter's teardown: freeing the
    # millions of objects of an analysis one by one takes longer than many queries (13 s after
    # parsing SGLang's `srt`).
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
