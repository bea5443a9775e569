"""The semantics registry is the one list of rules: the docs, the shared vocabulary and the
fixtures follow it.

- docs/rules.md's table is the registry's (`python -m callgraph.semantics.table docs/rules.md`
  regenerates it);
- `model.RULES`, the vocabulary consumers read without importing the analysis, names the same
  rules;
- every rule an edge may record has a fixture that asserts it, exactly, on a hop: a reach case
  (`fixtures/reach/*/expected.json`, `rules`) or an export case (`fixtures/export/*/`, `edges`).
"""
from __future__ import annotations

import json
from pathlib import Path

from callgraph import model, semantics
from callgraph.semantics import table
from callgraph.values import VExt

HERE = Path(__file__).resolve().parent.parent
# Registered rules no fixture can assert yet, and why. The test below fails once one is
# asserted, so this list only shrinks.
NOT_YET_ASSERTED: dict[str, str] = {}  # rule -> why no fixture asserts it on a hop yet


def _asserted_rules() -> dict[str, list[str]]:
    """rule -> fixtures asserting it exactly on a hop (a list of alternatives does not count)."""
    found: dict[str, list[str]] = {}
    for path in sorted((HERE / "fixtures" / "reach").glob("*/expected.json")):
        for rule in json.loads(path.read_text()).get("rules") or ():
            if isinstance(rule, str):
                found.setdefault(rule, []).append(path.parent.name)
    for path in sorted((HERE / "fixtures" / "export").glob("*/expected.json")):
        for edge in json.loads(path.read_text())["edges"]:
            found.setdefault(edge["rule"], []).append(path.parent.name)
    return found


def test_docs_table_is_the_registry():
    text = (HERE / "docs" / "rules.md").read_text(encoding="utf-8")
    assert table.in_document(text) == table.markdown(), (
        "docs/rules.md's rules table differs from callgraph.semantics.REGISTRY; "
        "run: python -m callgraph.semantics.table docs/rules.md")


def test_model_vocabulary_names_the_registered_rules():
    assert sorted(model.RULES) == sorted(semantics.EDGE_RULES)


def test_every_rule_is_asserted_on_a_hop_by_a_fixture():
    asserted = _asserted_rules()
    missing = [r for r in semantics.EDGE_RULES if r not in asserted and r not in NOT_YET_ASSERTED]
    assert not missing, f"registered rules no fixture asserts on a hop: {missing}"
    stale = [r for r in NOT_YET_ASSERTED if r in asserted]
    assert not stale, f"asserted now, drop from NOT_YET_ASSERTED: {stale}"
    unknown = sorted(set(asserted) - set(semantics.EDGE_RULES))
    assert not unknown, f"fixtures assert rules the registry does not have: {unknown}"


def test_registry_entries_are_documented_and_placed():
    names = [r.name for r in semantics.REGISTRY]
    assert len(names) == len(set(names))
    for rule in semantics.REGISTRY:
        assert rule.behaviour(), rule
        assert rule.where, rule
        # a rule's decision is a module of semantics/; the other places only call it
        assert rule.where[0].startswith("semantics/"), (rule, rule.where)
        for where in rule.where:
            assert (HERE / "callgraph" / where).is_file(), (rule, where)


def test_external_callees_ask_the_rules_in_registry_order():
    """An external callee is asked partial, then computed getattr, the builtins' dunder calls, the iterators, the
    key functions, the containers, nn.Module's submodule walks, the builtins, the callback fallback (which answers
    nothing: it only hands functions over), and last what an outside function handed in-tree objects returns (the
    first that answers gives the call's values)."""
    assert [r.name for r in semantics.by_kind()[VExt]] == ["partial", "computed-getattr", "dunder", "iterator",
                                                     "key-function", "container", "submodules", "builtins",
                                                     "callback", "outside-results"]
