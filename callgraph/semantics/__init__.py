"""Model semantics: how torch and Python behave at calls into code outside the analysed tree.

Each rule is a small module whose docstring says which runtime behaviour it models. A rule is a
function `call(calls, value, args, node, scope, dispatch, tags)` that returns the values of the
call when it applies, or None to pass; rules are tried in the order of `external_rules()`.
Rules that live in the evaluator itself, because they are Python's core lookup (MRO, `super()`,
`self.x` attributes, properties, parameter binding, module call → forward), are documented in
`callgraph/infer/classes.py`, `calls.py` and `semantics/binding.py`; docs/rules.md lists all of them.
"""
from __future__ import annotations

from . import builtins_model, callbacks, containers, partial


def external_rules():
    # Order matters: specific models first, the callback fallback last.
    return [partial.call, containers.call, builtins_model.call, callbacks.call]


def wants_args(name: str) -> bool:
    """Whether an external callee named `name` has a model here that reads its arguments."""
    found = _WANTS_ARGS.get(name)
    if found is None:
        found = _WANTS_ARGS[name] = (containers.container_kind(name) is not None or name in partial.NAMES
                                     or builtins_model.handles(name))
    return found


_WANTS_ARGS: dict[str, bool] = {}  # asked once per external call site: answered once per name
