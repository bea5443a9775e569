"""The one function that reads gate configuration: `load_config`.

Sources, in order: `--config FILE` (INI or, by its `.toml` suffix, TOML); else `setup.cfg` with a
`[callgraph]` or `[callgraph:contract:<id>]` section in the working folder; else `pyproject.toml`
with `[tool.callgraph]`. Shared settings live in `[callgraph]` / `[tool.callgraph]`, one contract per
`[callgraph:contract:<id>]` / `[tool.callgraph.contracts.<id>]`. Every key is a typed field
(schema.py) checked before any analysis runs. Paths are relative to the config file's folder, so a
contract file means the same thing from any working directory. CLI values override the file's
shared settings (vulture's rule); `--root` or `--package` replaces the file's roots and package
together (the tree is one setting). A contract's own roots/package/bindings override both, and a
contract on its own roots or package does not inherit the shared bindings (they name classes of
the shared tree). Every analysing command (`reach`, `graph`, `callers`, `callees`, `export`)
reads the same shared section through `tree_scope`, so one `[tool.callgraph]` serves them all.
"""
from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .schema import CONTRACT_FIELDS, SHARED_FIELDS, read_section

INI_SHARED = "callgraph"
INI_CONTRACT = "callgraph:contract:"


@dataclass(frozen=True)
class Scope:
    """What one Analysis is built from; contracts with equal scopes share one analysis."""

    roots: tuple[str, ...] = ()          # absolute paths
    package: str | None = None
    binds: tuple[tuple[str, str], ...] = ()
    model_config: str | None = None      # a config.json (or its folder), absolute


@dataclass(frozen=True)
class Contract:
    id: str
    name: str
    entries: tuple[str, ...]             # reached from any of these (config contracts have one)
    target: str
    expect: str                          # "reached" | "unreachable"
    scope: Scope
    via: str | None = None
    where: str = ""                      # "setup.cfg [callgraph:contract:x]", for messages


@dataclass(frozen=True)
class Config:
    source: Path | None
    scope: Scope
    contracts: tuple[Contract, ...] = ()
    entries: tuple[str, ...] = ()
    unknown: str = "fail"
    format: str = "text"
    baseline: Path | None = None
    fail_on_drift: bool = False
    max_seconds: float | None = None
    max_file_mb: float | None = None     # None: the default (roots.MAX_FILE_MB)
    model_config: Path | None = None     # a checkpoint's config.json or folder (--model-config)
    extra: dict[str, Any] = field(default_factory=dict)


def load_config(path: str | Path | None = None, cwd: str | Path = ".",
                overrides: dict[str, Any] | None = None, required: bool = True) -> Config:
    """Find, parse and validate the config; apply CLI `overrides` (None values are not given).

    `required=False` (patch mode) returns an empty config when no file has a callgraph section.
    """
    cwd = Path(cwd).resolve()
    source, shared, contracts, ini = _read(Path(path) if path else None, cwd)
    if source is None and required:
        raise ConfigError(
            f"no callgraph configuration: {cwd / 'setup.cfg'} has no [callgraph] section and "
            f"{cwd / 'pyproject.toml'} no [tool.callgraph]; pass --config FILE")
    base = source.parent if source else cwd
    name = source.name if source else "command line"
    shared_where = f"{name} [{INI_SHARED if ini else 'tool.callgraph'}]"
    settings = read_section(shared, SHARED_FIELDS, ini, shared_where)
    given = {k: v for k, v in (overrides or {}).items() if v not in (None, (), False)}
    if "roots" in given or "package" in given:  # the tree is one setting: --root or --package
        settings.pop("roots", None)             # replaces the file's roots and package both
        settings.pop("package", None)
    settings.update(given)
    shared_scope = _scope(settings, base, Scope(roots=(str(base),)))
    out = []
    for cid, values in contracts.items():
        where = f"{name} [{INI_CONTRACT + cid if ini else 'tool.callgraph.contracts.' + cid}]"
        if not cid or any(c.isspace() for c in cid):
            raise ConfigError(f"{where}: a contract id must be one word")
        if not isinstance(values, dict):
            raise ConfigError(f"{where}: expected a table of contract keys")
        got = read_section(values, CONTRACT_FIELDS, ini, where)
        out.append(Contract(
            id=cid, name=got.get("name", cid), entries=(got["entry"],), target=got["target"],
            expect=got["expect"], via=got.get("via"), scope=_scope(got, base, shared_scope),
            where=where))
    baseline = settings.get("baseline")
    return Config(
        source=source, scope=shared_scope, contracts=tuple(out),
        entries=tuple(settings.get("entries", ())), unknown=settings.get("unknown", "fail"),
        format=settings.get("format", "text"),
        baseline=(base / baseline) if isinstance(baseline, str) else baseline,
        fail_on_drift=settings.get("fail_on_drift", False),
        max_seconds=settings.get("max_seconds"), max_file_mb=settings.get("max_file_mb"),
        model_config=(base / settings["model_config"]) if "model_config" in settings else None)


def _scope(values: dict[str, Any], base: Path, fallback: Scope) -> Scope:
    """A section's roots/package/bindings/model_config, each falling back to the enclosing scope's."""
    roots = values.get("roots")
    package = values.get("package")
    if roots is None and package is not None:
        roots = ()
    own_tree = roots is not None or package is not None
    return Scope(
        roots=fallback.roots if roots is None else tuple(str((base / r).resolve()) for r in roots),
        package=package if own_tree else fallback.package,
        # bindings name classes of one tree: a contract on its own tree does not inherit them
        binds=tuple(values["bindings"]) if "bindings" in values else
        (() if own_tree else fallback.binds),
        # a model config, like bindings, belongs to one tree
        model_config=str((base / values["model_config"]).resolve()) if values.get("model_config") else
        (None if own_tree else fallback.model_config))


def _read(path: Path | None, cwd: Path):
    """-> (source, shared section, {id: contract section}, is_ini); source None if none found."""
    if path is not None:
        path = path if path.is_absolute() else cwd / path
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        if path.suffix == ".toml":
            found = _read_toml(path, explicit=True)
        else:
            found = _read_ini(path, explicit=True)
        return (path.resolve(), *found)
    for candidate, reader in ((cwd / "setup.cfg", _read_ini), (cwd / "pyproject.toml", _read_toml)):
        if candidate.is_file():
            found = reader(candidate, explicit=False)
            if found is not None:
                return (candidate.resolve(), *found)
    return None, {}, {}, True


def _read_ini(path: Path, explicit: bool):
    parser = configparser.ConfigParser(interpolation=None, default_section="\0no-defaults")
    parser.optionxform = str  # keep keys as written, so messages quote the user's spelling
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot parse: {_one_line(exc)}") from None
    sections = [s for s in parser.sections() if s == INI_SHARED or s.startswith(INI_SHARED + ":")]
    if not sections:
        if explicit:
            raise ConfigError(f"{path}: no [callgraph] or [callgraph:contract:<id>] section")
        return None
    contracts: dict[str, dict[str, str]] = {}
    for section in sections:
        if section.startswith(INI_CONTRACT):
            contracts[section[len(INI_CONTRACT):].strip()] = dict(parser.items(section, raw=True))
        elif section != INI_SHARED:
            raise ConfigError(f"{path.name} [{section}]: unknown section "
                              f"(expected [callgraph] or [callgraph:contract:<id>])")
    shared = dict(parser.items(INI_SHARED, raw=True)) if parser.has_section(INI_SHARED) else {}
    return shared, contracts, True


def _read_toml(path: Path, explicit: bool):
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot parse: {_one_line(exc)}") from None
    table = data.get("tool", {}).get("callgraph")
    if table is None:
        if explicit:
            raise ConfigError(f"{path}: no [tool.callgraph] table")
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path.name} [tool.callgraph]: expected a table")
    shared = dict(table)
    contracts = shared.pop("contracts", {})
    if not isinstance(contracts, dict):
        raise ConfigError(f"{path.name} [tool.callgraph] contracts: expected a table of "
                          f"[tool.callgraph.contracts.<id>] tables")
    return shared, contracts, False


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def tree_scope(cwd: str | Path, roots: tuple[str, ...] = (), package: str | None = None,
               binds: tuple[tuple[str, str], ...] = (), model_config: str | None = None) -> tuple[Scope, Config]:
    """The tree an analysing command runs on: the working folder's `[callgraph]` /
    `[tool.callgraph]` roots, package, bindings and model_config, each overridden by its
    command-line value. -> (scope, the whole config: its `source` is the file read, or None).
    The whole file is validated, as for `check`."""
    cfg = load_config(None, cwd, {"roots": tuple(str(Path(r).resolve()) for r in roots),
                                  "package": package, "bindings": tuple(binds),
                                  "model_config": str(Path(model_config).resolve()) if model_config else None},
                      required=False)
    return cfg.scope, cfg
