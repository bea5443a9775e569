"""`module-call`: an `nn.Module` called runs `forward`; an object with a `__call__` runs that.

`nn.Module.__call__` runs the hooks and then `self.forward(...)`, found by the MRO, so calling
a module instance is an edge to its `forward`. An in-tree `__call__` overrides it
(`call-method`). An instance known only by its base type (an annotation) may be any in-tree
subclass: each subclass that overrides `__call__` or `forward` is a target too
(`class-hierarchy`).
"""
from __future__ import annotations

from ..values import VInst
from . import class_hierarchy, decorators, mro
from .rule import Call, Outcome, Rule


class ModuleCall(Rule):
    """an `nn.Module` instance called: `nn.Module.__call__` runs `forward` (by MRO); also
    `super().__call__(...)` from an overriding `__call__`"""

    name = "module-call"
    where = ("semantics/module_call.py", "infer/classes.py")
    kinds = (VInst,)

    def apply(self, call: Call) -> Outcome:
        v, d, args, tags = call.value, call.dispatch, call.args, call.tags
        calls = call.calls
        cm = call.ev.classes
        out: set = set()
        classes = class_hierarchy.receivers(cm, v, ("__call__", "forward"))
        for i, qual in enumerate(classes):
            inst = v if i == 0 else class_hierarchy.receiver(qual)
            dunder = cm.method(qual, "__call__")
            fwd = cm.method(qual, "forward")
            if i > 0 and not ((dunder and dunder[1] not in cm.mro(v.qual)) or (fwd and fwd[1] not in cm.mro(v.qual))):
                continue  # a subclass that overrides nothing adds no target
            if dunder is not None:
                rule = CALL_METHOD.name if i == 0 else class_hierarchy.RULE.name
                out |= calls.invoke(dunder[0], inst, args, None, rule, d)
                out |= _wrapped(call, dunder[0], inst)
            elif fwd is not None and (cm.is_module(qual) or cm.external_bases(qual) or cm.unknown_bases(qual)):
                mro.inherited(fwd[1], qual, tags)
                rule = self.name if i == 0 else class_hierarchy.RULE.name
                out |= calls.invoke(fwd[0], inst, args, None, rule, d)
                out |= _wrapped(call, fwd[0], inst)
            elif i == 0:
                unk = cm.unknown_bases(qual)
                if unk:
                    d.unresolved.append(f"instance of {qual.rsplit('.', 1)[-1]} called; base not resolved ({unk[0]})")
                elif not cm.external_bases(qual):
                    d.unresolved.append(f"instance of {qual.rsplit('.', 1)[-1]} called, but it has no __call__ or forward")
        return frozenset(out)


def _wrapped(call: Call, fn, inst) -> frozenset:
    """The wrappers the in-tree decorators of `fn` (a `forward`, a `__call__`) make of it,
    called beside it: `@can_return_tuple def forward` runs the wrapper, which runs forward."""
    if not fn.decorators:
        return frozenset()
    cm = call.ev.classes
    out: set = set()
    for w in decorators.bound_wrappers(call.ev, cm.wrappers(fn, call.tags), inst, call.tags):
        out |= call.calls.call_value(w, call.args, call.node, call.scope, call.dispatch, call.tags)
    return frozenset(out)


class CallMethod(Rule):
    """an instance with an in-tree `__call__` called (it overrides `nn.Module.__call__`)"""

    name = "call-method"
    where = ("semantics/module_call.py",)


RULE = ModuleCall()
CALL_METHOD = CallMethod()
