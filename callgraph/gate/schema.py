"""Typed config fields: every key the gate accepts, with its type, checked before any analysis.

A contract file is read by people who did not write it, often months later in a failing CI log.
So a typo (`expect = reachd`, `targte = ...`) must stop the run up front as an *invalid* contract
(exit 3) naming the file, section and key, never run as a contract that silently checks less.
One field object parses both spellings of a value: the INI string of setup.cfg and the typed
value of pyproject.toml, so the two files accept exactly the same things.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ConfigError

_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}


class FieldError(ValueError):
    """A value that does not fit its field; config.py adds the file, section and key."""


@dataclass(frozen=True)
class Field:
    """One key: how to read it from INI text and from a TOML value."""

    kind: str                                  # str | list | choice | bool | float | mapping
    required: bool = False
    choices: tuple[str, ...] = ()
    help: str = ""

    def parse(self, value: Any, ini: bool) -> Any:
        reader: Callable[[Any, bool], Any] = getattr(self, f"_read_{self.kind}")
        return reader(value, ini)

    def _read_str(self, value: Any, ini: bool) -> str:
        if ini:
            value = value.strip()
            if "\n" in value:
                raise FieldError("expected one value, got several lines")
        elif not isinstance(value, str):
            raise FieldError(f"expected a string, got {_tname(value)}")
        if not value.strip():
            raise FieldError("must not be empty")
        return value.strip()

    def _read_choice(self, value: Any, ini: bool) -> str:
        text = self._read_str(value, ini)
        if text not in self.choices:
            raise FieldError(f"{text!r} is not one of: {', '.join(self.choices)}")
        return text

    def _read_list(self, value: Any, ini: bool) -> tuple[str, ...]:
        if ini:
            items = [p.strip() for line in value.splitlines() for p in line.split(",")]
            return tuple(p for p in items if p)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise FieldError(f"expected an array of strings, got {_tname(value)}")
        return tuple(v.strip() for v in value if v.strip())

    def _read_bool(self, value: Any, ini: bool) -> bool:
        if ini:
            word = value.strip().lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
            raise FieldError(f"expected true or false, got {value.strip()!r}")
        if not isinstance(value, bool):
            raise FieldError(f"expected true or false, got {_tname(value)}")
        return value

    def _read_float(self, value: Any, ini: bool) -> float:
        if ini:
            try:
                number = float(value.strip())
            except ValueError:
                raise FieldError(f"expected a number, got {value.strip()!r}") from None
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FieldError(f"expected a number, got {_tname(value)}")
        else:
            number = float(value)
        if number <= 0:
            raise FieldError("must be greater than 0")
        return number

    def _read_mapping(self, value: Any, ini: bool) -> tuple[tuple[str, str], ...]:
        pairs: list[tuple[str, str]] = []
        if ini:
            for line in value.splitlines():
                for item in line.split(","):
                    if not item.strip():
                        continue
                    key, sep, val = item.partition("=")
                    if not sep or not key.strip() or not val.strip():
                        raise FieldError(f"expected FACTORY = CLASS, got {item.strip()!r}")
                    pairs.append((key.strip(), val.strip()))
        elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            pairs = [(k.strip(), v.strip()) for k, v in value.items()]
        else:
            raise FieldError(f"expected a table of FACTORY = \"CLASS\", got {_tname(value)}")
        return tuple(sorted(pairs))


def _tname(value: Any) -> str:
    return {dict: "a table", list: "an array", bool: "a boolean", str: "a string",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


# Where (roots, package, bindings) are read; shared by [callgraph] and every contract.
SCOPE_FIELDS = {
    "roots": Field("list", help="source roots, relative to the config file's folder"),
    "package": Field("str", help="an installed package to analyse instead of roots"),
    "bindings": Field("mapping", help="FACTORY = CLASS, as reach --bind"),
    "model_config": Field("str", help="a checkpoint's config.json (or its folder), relative to the config file's "
                                      "folder, as reach --model-config"),
}

SHARED_FIELDS = {
    **SCOPE_FIELDS,
    "entries": Field("list", help="entry points for --patch when no --entry is given"),
    "unknown": Field("choice", choices=("fail", "warn"), help="what an unknown verdict does"),
    "format": Field("choice", choices=("text", "json", "github")),
    "baseline": Field("str", help="baseline JSON, relative to the config file's folder"),
    "fail_on_drift": Field("bool"),
    "max_seconds": Field("float", help="time limit of one reach query"),
    "max_file_mb": Field("float", help="files larger than this are skipped with a warning (default 8)"),
}

CONTRACT_FIELDS = {
    "name": Field("str", help="a human title; defaults to the id"),
    "entry": Field("str", required=True),
    "target": Field("str", required=True),
    "expect": Field("choice", required=True, choices=("reached", "unreachable")),
    "via": Field("str", help="the path must pass through this function"),
    **SCOPE_FIELDS,
}


def read_section(values: dict[str, Any], fields: dict[str, Field], ini: bool,
                 where: str) -> dict[str, Any]:
    """Parse one section; `where` ("setup.cfg [callgraph]") leads every error message."""
    out: dict[str, Any] = {}
    for key, raw in values.items():
        norm = key.replace("-", "_")
        field = fields.get(norm)
        if field is None:
            known = ", ".join(sorted(fields))
            close = difflib.get_close_matches(norm, list(fields), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(f"{where} {key}: unknown key ({hint}known keys: {known})")
        try:
            out[norm] = field.parse(raw, ini)
        except FieldError as exc:
            raise ConfigError(f"{where} {key}: {exc}") from None
    for key, field in fields.items():
        if field.required and key not in out:
            raise ConfigError(f"{where} {key}: missing required key")
    return out
