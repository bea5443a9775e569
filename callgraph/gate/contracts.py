"""Evaluate contracts: one shared Analysis per scope (the parsing and the index are paid once).

A contract's verdict comes from `Analysis.reach`; `via` splits the question in two legs (entry to
via, via to target) unless the direct witness already passes through via. The status is the
verdict read against `expect`: the verdict never lies, the status says whether CI should care.
Names that do not resolve are an *invalid* contract (ConfigError, exit 3), checked for every
contract before any reach query runs, so a typo never costs a full analysis first.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable

from ..errors import AmbiguousName, BindingError, CallgraphError, ConfigError, NameNotFound
from ..model import Hop, Proof, Verdict
from .config import Contract, Scope
from .frontier import frontier_sections, label_from_sites, labels_for, witness_section
from .results import ContractResult, Status


class Analyses:
    """Analysis objects keyed by scope (roots, package, bindings): the sharing the issue asks."""

    def __init__(self, factory: Callable[..., Any] | None = None, **options: Any):
        self._factory = factory
        self._options = options
        self._cache: dict[Scope, Any] = {}

    def get(self, scope: Scope) -> Any:
        if scope not in self._cache:
            if self._factory is None:
                from ..api import Analysis  # the engine, imported only when a contract is checked

                self._factory = Analysis
            an = self._factory(roots=list(scope.roots), package=scope.package, binds=dict(scope.binds),
                               **({"model_config": scope.model_config} if scope.model_config else {}),
                               **self._options)
            unmatched = getattr(an, "unmatched_binds", lambda: [])()
            if unmatched:  # a gate must not pass on a bind that never applied (misspelt factory)
                raise BindingError(f"bindings {', '.join(unmatched)}: no call site in the tree "
                                   f"calls {'it' if len(unmatched) == 1 else 'them'} (misspelt?)")
            self._cache[scope] = an
        return self._cache[scope]

    def __len__(self) -> int:
        return len(self._cache)


def evaluate(contracts: Iterable[Contract], analyses: Analyses, max_seconds: float | None = None,
             baseline_paths: dict[str, tuple[Hop, ...]] | None = None) -> list[ContractResult]:
    contracts = list(contracts)
    resolved = [_resolve(c, _analysis(c, analyses)) for c in contracts]
    results = []
    for contract, names in zip(contracts, resolved):
        an = analyses.get(contract.scope)
        old = (baseline_paths or {}).get(contract.id, ())
        started = time.monotonic()
        result = _check(contract, names, an, max_seconds, old)
        results.append(_with_time(result, time.monotonic() - started))
    return results


def _analysis(contract: Contract, analyses: Analyses) -> Any:
    """The contract's shared analysis; a bad root or binding names the contract's section."""
    try:
        return analyses.get(contract.scope)
    except ConfigError:
        raise
    except CallgraphError as exc:
        raise type(exc)(f"{contract.where}: {exc}") from None


def _resolve(contract: Contract, an: Any) -> dict[str, Any]:
    """Qualified names of entry(ies), target and via; a name error names section and key."""
    out: dict[str, Any] = {}

    def one(key: str, name: str) -> str:
        try:
            return an.resolve(name)
        except (NameNotFound, AmbiguousName) as exc:
            raise ConfigError(f"{contract.where} {key}: {exc}") from None

    out["entries"] = tuple(one("entry", e) for e in contract.entries)
    out["target"] = one("target", contract.target)
    out["via"] = one("via", contract.via) if contract.via else None
    return out


def _check(contract: Contract, names: dict[str, Any], an: Any, max_seconds: float | None,
           old: tuple[Hop, ...]) -> ContractResult:
    target, via = names["target"], names["via"]
    proofs = [_reach_via(an, entry, target, via, max_seconds) for entry in names["entries"]]
    verdict, proof, path, failing = _combine(proofs)
    labels = labels_for(an, [*names["entries"], target, *([via] if via else []),
                          *(q for h in path for q in (h.caller, h.callee))])
    labels = label_from_sites(path, labels)
    expect_reached = contract.expect == "reached"
    if verdict is Verdict.REACHED:
        status = Status.KEPT if expect_reached else Status.BROKEN
        summary = ("reached" if expect_reached else
                   "expected unreachable, but a path exists")
        sections = () if expect_reached else (witness_section(an, path, labels),)
    elif verdict is Verdict.UNREACHABLE:
        status = Status.BROKEN if expect_reached else Status.KEPT
        summary = ("expected reached, proved unreachable" if expect_reached else "unreachable")
        sections = ()
        if expect_reached:
            leg_entry, leg_target, leg_proof = failing
            sections = frontier_sections(an, leg_entry, leg_target, leg_proof, old, labels)
    else:
        status = Status.UNKNOWN
        summary = f"expected {contract.expect}, but some calls could not be resolved"
        leg_entry, leg_target, leg_proof = failing
        sections = frontier_sections(an, leg_entry, leg_target, leg_proof, old, labels,
                                     closure=False)
    if via and verdict is not Verdict.REACHED and failing[1] == via:
        summary += f" (the leg to via {labels.get(via, via)})"
    elif via and verdict is not Verdict.REACHED and failing[0] == via:
        summary += f" (the leg from via {labels.get(via, via)})"
    return ContractResult(contract=contract, status=status, verdict=verdict, summary=summary,
                          path=path, sections=tuple(sections), proof=proof, labels=labels,
                          roots=tuple(str(r) for r in getattr(an, "roots", ()) or ()))


def _reach_via(an: Any, entry: str, target: str, via: str | None, max_seconds: float | None):
    """-> (verdict, proof, path, (leg entry, leg target, leg proof) of the leg that decided)."""
    full = an.reach(entry, target, max_seconds=max_seconds)
    if via is None or full.verdict is Verdict.UNREACHABLE:
        return full.verdict, full, tuple(full.path), (entry, target, full)
    if full.verdict is Verdict.REACHED and any(h.callee == via for h in full.path):
        return full.verdict, full, tuple(full.path), (entry, target, full)
    first = an.reach(entry, via, max_seconds=max_seconds)
    if first.verdict is Verdict.UNREACHABLE:
        return first.verdict, first, (), (entry, via, first)
    second = an.reach(via, target, max_seconds=max_seconds)
    if second.verdict is Verdict.UNREACHABLE:
        return second.verdict, second, (), (via, target, second)
    if first.verdict is Verdict.UNKNOWN:
        return first.verdict, first, (), (entry, via, first)
    if second.verdict is Verdict.UNKNOWN:
        return second.verdict, second, (), (via, target, second)
    path = tuple(first.path) + tuple(second.path)
    return Verdict.REACHED, first, path, (entry, target, first)


def _combine(proofs: list[tuple[Verdict, Proof, tuple[Hop, ...], tuple]]):
    """Several entries: reached from any wins; else unknown if any could; else unreachable."""
    for wanted in (Verdict.REACHED, Verdict.UNKNOWN, Verdict.UNREACHABLE):
        for verdict, proof, path, failing in proofs:
            if verdict is wanted:
                return verdict, proof, path, failing
    raise ValueError("no entry to check")  # config guarantees at least one entry


def _with_time(result: ContractResult, seconds: float) -> ContractResult:
    return replace(result, seconds=round(seconds, 3))
