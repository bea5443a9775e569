"""Model semantics: the rules, one module each, and the one ordered registry that lists them.

A rule (`rule.Rule`) models one runtime behaviour of Python or torch; its docstring says which,
and docs/rules.md's table is generated from this registry (`table.py`; a test fails when they
differ). The order of `REGISTRY` is the one order there is:
- the order in which the rules for one kind of callee value are asked (`by_kind`): the first
  whose `apply` answers gives the call's values (partial, then containers, then the builtins,
  then the callback fallback, which only hands functions over, and last what an outside
  function handed in-tree objects returns, for an external callee);
- the precedence that names a hop: the rule that dispatched the call writes its name on the
  edge; a plain call of a function (`direct`) is named by the most specific rule that typed
  its receiver, the others are its `via`, in this order.
Rules that type receivers inside the evaluator's lookup have no `kinds`: their module holds
the behaviour (`mro.py`, `init_attribute.py`, `super_call.py`...), and `infer/` calls it where
the lookup happens; so do the rules the dispatch and the exploration apply themselves
(`bound.py` before a call is dispatched, `class_hierarchy.py` in the class and call lookups,
`oracle.py` for Jedi's answers, `iter_protocol.py` and `external.py` for the edges the
exploration records).
"""
from __future__ import annotations

from . import (absent_attribute, abstract_class, attribute_store, binding, bound, builtin_dunders, builtins_model, callbacks, caught, class_hierarchy, class_of, computed_getattr, constructor,
               container_subclass, containers, contextmanager, decorators, descriptors, direct, enum_members, external, getattr_hook, init_attribute, init_chain,
               isinstance_narrowing, iter_protocol, iterators, key_functions, leaf_annotation, mapping_mixin, module_call, module_getattr, module_store, mro, none_narrowing, oracle, outside_results, partial, properties, rebound_store, registry, return_type, setattr_hook, submodules, super_call,
               triton_launch, typed_kwargs)
from .rule import Call, Outcome, Rule

REGISTRY: tuple[Rule, ...] = (
    bound.RULE,
    registry.RULE,
    module_call.RULE,
    module_call.CALL_METHOD,
    super_call.RULE,
    partial.RULE,
    computed_getattr.RULE,
    class_hierarchy.RULE,
    container_subclass.RULE,
    mapping_mixin.RULE,
    builtin_dunders.RULE,
    iterators.RULE,
    typed_kwargs.RULE,
    key_functions.RULE,
    containers.RULE,
    submodules.RULE,
    builtins_model.RULE,
    isinstance_narrowing.RULE,
    none_narrowing.RULE,
    contextmanager.RULE,
    caught.RULE,
    properties.RULE,
    descriptors.RULE,
    getattr_hook.RULE,
    module_getattr.RULE,
    setattr_hook.RULE,
    callbacks.RULE,
    outside_results.RULE,
    oracle.RULE,
    return_type.RULE,
    init_chain.RULE,
    binding.RULE,
    leaf_annotation.RULE,
    attribute_store.RULE,
    rebound_store.RULE,
    class_of.RULE,
    absent_attribute.RULE,
    module_store.RULE,
    enum_members.RULE,
    init_attribute.RULE,
    mro.RULE,
    abstract_class.RULE,
    constructor.RULE,
    triton_launch.RULE,
    decorators.RULE,
    direct.RULE,
    iter_protocol.RULE,
    external.RULE,
)

# The rules an edge may name, most specific first (model.RULES lists the same for consumers).
EDGE_RULES: tuple[str, ...] = tuple(r.name for r in REGISTRY if r.on_edges)
PRECEDENCE: dict[str, int] = {name: i for i, name in enumerate(EDGE_RULES)}


def by_kind() -> dict[type, tuple[Rule, ...]]:
    """Callee value class -> the rules that dispatch on it, in registry order."""
    out: dict[type, list[Rule]] = {}
    for rule in REGISTRY:
        for kind in rule.kinds:
            out.setdefault(kind, []).append(rule)
    return {kind: tuple(rules) for kind, rules in out.items()}


def wants_args(name: str) -> bool:
    """Whether an external callee named `name` has a model here that reads its arguments."""
    found = _WANTS_ARGS.get(name)
    if found is None:
        found = _WANTS_ARGS[name] = (containers.container_kind(name) is not None or name in partial.NAMES
                                     or builtins_model.handles(name) or iterators.handles(name)
                                 or builtin_dunders.handles(name))  # getattr: builtins
    return found


_WANTS_ARGS: dict[str, bool] = {}  # asked once per external call site: answered once per name

__all__ = ["REGISTRY", "EDGE_RULES", "PRECEDENCE", "Call", "Outcome", "Rule", "by_kind", "wants_args"]
