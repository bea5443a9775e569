"""`triton-launch`: `kernel[grid](...)` on a `@triton.jit` function runs that function.

Triton's `@triton.jit` (and `@triton.autotune(...)`, `@triton.heuristics(...)` over it) turns
an in-tree function into an outside `JITFunction`; `kernel[grid]` is its launcher and calling
it runs the kernel with the call's arguments: compiled, the body runs on the GPU and calls no
Python of the tree but other `@triton.jit` functions; under `TRITON_INTERPRET=1` the body runs
as Python. So the launch is a call of the function itself, and also of every in-tree callable
given to its triton decorators (`heuristics`' values, `autotune`'s `prune_configs_by`,
`pre_hook`/`post_hook`, `perf_model`...), which the launcher calls. The launch stays
unresolved (an outside value called) when a decorator is not triton's, when the function is a
method, or when a decorator's argument holds a value not known (one that may be a callable the
launcher calls: an unknown, an outside function's result, a `triton.Config` where the tree
passes a Config a hook anywhere). SGLang's kernels launch this way:
`_fwd_kernel[grid](q, k, v, ..., BLOCK=BLOCK)`, `w8a8_block_fp8_matmul[grid](...)`.
"""
from __future__ import annotations

import ast
import re
from typing import FrozenSet

from ..index.scopes import FuncInfo
from ..values import EMPTY, Value, VConst, VExt, VFunc, VSeq, VUnknown
from . import open_values
from .protocol import Inference, Scope
from .rule import Rule


class TritonLaunch(Rule):
    """`kernel[grid]` called, where `kernel` is an in-tree function decorated only by triton's
    `jit` / `autotune` / `heuristics`: the launcher runs the function with the call's arguments
    (its body is Python under `TRITON_INTERPRET=1`) and every in-tree callable given to those
    decorators (`heuristics` values, `autotune`'s `prune_configs_by`, hooks); unresolved when a
    decorator is another, or one of its arguments is a value not known"""

    name = "triton-launch"
    where = ("semantics/triton_launch.py", "infer/sequences.py")


RULE = TritonLaunch()

# The outside decorators whose result is launched by `kernel[grid]`.
TRITON_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics", "triton.runtime.jit",
                               "triton.runtime.autotune", "triton.runtime.heuristics", "triton.runtime.jit.jit",
                               "triton.runtime.autotuner.autotune", "triton.runtime.autotuner.heuristics"})
# A triton.Config given a hook somewhere in the tree's text: Config values may then hold one.
_HOOK_TEXT = re.compile(r"\b(?:pre_hook|post_hook)\s*=")
MAX_NESTING = 3


def launched(ev: Inference, v: VFunc, tags: set[str]) -> FrozenSet[Value] | None:
    """What `v[grid]` runs when called, or None when `v` is not a triton kernel (the caller
    keeps its default); an unknown, with the reason, where a decorator's argument is not known."""
    fn = ev.p.functions.get(v.qual)
    if fn is None or isinstance(fn.node, ast.Lambda) or not fn.node.decorator_list:
        return None
    memo = ev.stores_memo
    key = ("triton-launch", v.qual)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _launched(ev, fn)
    if not found:
        return None
    if not all(isinstance(x, VUnknown) for x in found):
        tags.add(RULE.name)
    return frozenset(x if not isinstance(x, VFunc) or x.qual != v.qual else v for x in found)


def _launched(ev: Inference, fn: FuncInfo) -> FrozenSet[Value]:
    if fn.cls is not None or isinstance(fn.node, ast.Lambda):
        return EMPTY
    scope = Scope(fn.module, fn.parent, None)
    out: set[Value] = {VFunc(fn.qual, None, None)}
    for dec in fn.node.decorator_list:
        head = dec.func if isinstance(dec, ast.Call) else dec
        names = {x.name for x in ev.eval(head, scope, set()) if isinstance(x, VExt)}
        if not names or not names <= TRITON_DECORATORS:
            return EMPTY  # not (only) triton's: what the name binds is another object
        if isinstance(dec, ast.Call):
            for arg in list(dec.args) + [k.value for k in dec.keywords]:
                for x in ev.eval(arg, scope, set()):
                    why = _callables(ev, x, out, 0)
                    if why:
                        return frozenset({VUnknown(f"{fn.name}[...] launches what its decorator is given: {why}")})
    return frozenset(out)


def _callables(ev: Inference, x: Value, out: set[Value], depth: int) -> str:
    """Add the in-tree callables `x` holds to `out`; why not, where it may hold one not known."""
    if isinstance(x, VConst):
        return ""
    if isinstance(x, VFunc):
        out.add(x)
        return ""
    if isinstance(x, VSeq):
        if depth >= MAX_NESTING:
            return "a container nested too deep"
        for e in x.elems:
            why = _callables(ev, e, out, depth + 1)
            if why:
                return why
        return ""
    if isinstance(x, VExt):
        if x.name == "triton.Config()" or x.name.endswith(".Config()"):
            return "a triton.Config, and the tree gives Configs hooks" if _hooked(ev) else ""
        if open_values.opaque_call(x.name) is None and not x.name.startswith("<"):
            return ""
        return f"an outside value ({x.name})"
    if isinstance(x, VUnknown):
        return x.why
    return f"a {type(x).__name__} value"


def _hooked(ev: Inference) -> bool:
    memo = ev.stores_memo
    found = memo.get("triton-launch hooks")
    if found is None:
        found = memo["triton-launch hooks"] = any(_HOOK_TEXT.search(text) for _, text in ev.p.texts())
    return found
