"""In-tree functions handed to external code: `torch.utils.checkpoint.checkpoint(fn, x)`,
`module.register_forward_hook(fn)`, `executor.submit(fn)`. The external code may call them, so
each becomes a target with rule `callback`. Introspection builtins (`getattr`, `isinstance`,
`print`, logging) never call their arguments and are left out.

In-tree modules (and objects with a `__call__`) handed to an outside function or class
(`checkpoint(self.layer, x)`, `fully_shard(model)`) may be called too: their `__call__`, or a
module's `forward`, is a callback; so are those handed to torch's hook registrations
(`module.register_forward_hook(hook_object)`: `HOOK_REGISTRATIONS`). Not so for the other
methods of outside classes or objects (`nn.Module.__init__(self)`, `self.add_module(name, m)`
register, they do not call) nor for
modules that only keep or copy what they are given (`weakref`, `copy`, `pickle`).
"""
from __future__ import annotations

from ..values import VExt, VFunc, VInst, VPartial
from .rule import Call, CallArgs, Outcome, Rule

NEVER_CALL = {
    "getattr", "hasattr", "setattr", "isinstance", "issubclass", "id", "print", "repr", "str", "type",
    "len", "callable", "hash", "vars", "dir", "format", "bool", "int", "float", "tuple", "list", "dict", "set",
    "super", "iter", "next", "zip", "enumerate", "range", "sorted", "reversed", "min", "max", "sum", "any", "all",
}
NEVER_CALL_PREFIXES = ("logging.", "logger.", "warnings.", "inspect.", "typing.", "dataclasses.")
# Outside modules whose functions keep, copy or describe an object, never calling it.
KEEPING_PREFIXES = ("weakref.", "copy.", "pickle.", "gc.", "sys.", "json.", "operator.", "abc.", "enum.")


# torch.nn.Module's methods (and torch's globals) that register a hook the module's call runs
# later: a callable object handed to them is called, as a function is.
HOOK_REGISTRATIONS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_state_dict_pre_hook",
    "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
    "register_module_forward_hook", "register_module_forward_pre_hook",
    "register_module_full_backward_hook", "register_module_full_backward_pre_hook", "register_hook",
})


class Callbacks(Rule):
    """an in-tree function handed to external code (`checkpoint(fn, x)`,
    `register_forward_hook(fn)`), which may call it; so may an in-tree module or callable object
    handed to an outside function or class (`checkpoint(self.layer, x)`: its `__call__` or
    `forward`) or to torch's hook registrations (`register_forward_hook(Hook())`), not to another
    method of an outside class or object nor to `weakref`/`copy`/`pickle`"""

    name = "callback"
    where = ("semantics/callbacks.py",)
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        name = call.value.name
        short = name.rsplit(".", 1)[-1]
        if name.startswith("builtins.") and short in NEVER_CALL or name.startswith(NEVER_CALL_PREFIXES):
            return False
        return not (".logger." in name or ".log." in name or name.endswith(".debug") or name.endswith(".info")
                    or name.endswith(".warning"))

    def apply(self, call: Call) -> Outcome:
        """Each function among the arguments is a target; the call's value is left to the
        caller's default (an external result)."""
        name = call.value.name
        hand_over(call.calls, handed(call.args), CallArgs(), call.dispatch, self.name,
                  instances=may_call_instances(name) or name.rpartition(".")[2] in HOOK_REGISTRATIONS)
        return None


RULE = Callbacks()


def handed(args: CallArgs) -> list:
    """The values given to a call, positional then keyword: what an outside callee may call."""
    return [m for a in list(args.pos) + list(args.kw.values()) for m in a]


def hand_over(calls, values, args: CallArgs, d, rule: str, instances: bool = True) -> None:
    """Each in-tree function among `values` runs with `args` (a bound method with its self, a
    `functools.partial` with its arguments first), and, where `instances`, each in-tree
    callable object or module (its `__call__`, or a module's `forward`): targets of `d` under
    `rule`, whose return values are not the call's."""
    functions = calls.ev.p.functions
    for m in values:
        if isinstance(m, VFunc):
            fn = functions.get(m.qual)
            if fn is not None:
                calls.invoke(fn, m.self_val, args, m.closure, rule, d, returning=False)
        elif isinstance(m, VInst) and instances:
            _instance_callback(calls, m, args, d, rule)
        elif isinstance(m, VPartial):
            for f in m.func:
                if isinstance(f, VFunc) and f.qual in functions:
                    calls.invoke(functions[f.qual], f.self_val, CallArgs(list(m.args) + args.pos), f.closure, rule, d,
                                 returning=False)


def may_call_instances(name: str) -> bool:
    """Whether the outside callee `name` may call an object handed to it: a function or class by
    its import name, not a method of an outside class or object (a CapWords part before the last,
    or a call result) nor a keeping module's function."""
    if "(" in name or name.startswith("<") or name.startswith(KEEPING_PREFIXES):
        return False
    return not any(part[:1].isupper() for part in name.split(".")[:-1])


def _instance_callback(calls, m: VInst, args: CallArgs, d, rule: str) -> None:
    cm = calls.ev.classes
    found = cm.method(m.qual, "__call__")
    if found is None and cm.is_module(m.qual):
        found = cm.method(m.qual, "forward")
    if found is not None:
        calls.invoke(found[0], m, args, None, rule, d, returning=False)
