"""`leaf-annotation`: a parameter annotated with a data type (`x: torch.Tensor`) whose argument
was not inferred is that data type, as an unbound one is.

A parameter with no argument bound is read off its annotation (`infer/annotations.py`):
`x: torch.Tensor` is a tensor, whose methods are outside leaves (`open_values.LEAF_TYPES`).
A parameter bound at a call site whose argument was not inferred (`binding`'s "argument not
inferred at the call site", the result of a call that is itself a blocker, a value read from an
outside object) is not known any better than an unbound one; here the same annotation is
believed in the same way: the unknown argument is replaced by what the annotation describes,
when that is only data (`SCALAR_LEAVES`: tensors, dtypes, devices, numbers, strings; `None`;
`Optional[...]`, `Tuple[...]`, `List[...]` of those), and kept otherwise. The site that made the
unknown value stays a blocker where it is; what is given up is only that the value, against its
annotation, is some in-tree object. Containers annotated by their builtin type alone (`list`,
`dict`), `argparse.Namespace`, enums and loggers are not data here: what they hold is not
described, so they stay unknown. SGLang's kernels and quantisation helpers take their tensors
this way (`def apply_fp8_linear(input: torch.Tensor, ...)`, called with `self.quant_method`'s
results): their `x.view(...)`, `x.stride(0)` are tensor methods, not blockers.
A function's return annotation is believed the same way (`returned`): what a function
annotated `-> torch.Tensor` returns, where that was not inferred (an outside kernel's result,
a blocker's value), is a tensor; its known values are kept as they are. SGLang's quantisation
methods, `def apply(self, layer, x, bias=None) -> torch.Tensor`, return what a dozen backends
compute; `qkv, _ = self.qkv_proj(x)` then `qkv.split(...)` is a tensor's method.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..index.scopes import FuncInfo
from ..values import Value, VConst, VExt, VSeq, VUnknown
from .protocol import Inference, Scope
from .rule import Rule


class LeafAnnotation(Rule):
    """a parameter annotated with a data type (`x: torch.Tensor`, `Optional[torch.Tensor]`,
    `Tuple[torch.Tensor, ...]`, `int`, `str`) whose argument at the call site was not inferred is
    that data type, as a parameter with no argument bound is: its methods are outside leaves;
    so is what a function annotated `-> torch.Tensor` returns where that was not inferred.
    Not for `list`/`dict` alone, `Namespace`, enums, loggers or any other class, whose contents
    an annotation does not describe"""

    name = "leaf-annotation"
    where = ("semantics/leaf_annotation.py", "infer/evaluator.py")
    on_edges = False  # it makes a value external: no hop is ever resolved through it


RULE = LeafAnnotation()

# Outside types whose instances hold no callable the tree could have put there.
SCALAR_LEAVES = frozenset({
    "torch.Tensor", "torch.dtype", "torch.device", "torch.Size", "torch.Generator", "torch.Stream",
    "torch.Event", "torch.cuda.Stream", "torch.cuda.Event", "torch.memory_format", "torch.layout",
    "numpy.ndarray", "numpy.dtype",
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes", "builtins.complex",
    "builtins.slice", "builtins.range", "builtins.bytearray", "pathlib.Path",
})


def narrowed(ev: Inference, fn: FuncInfo, name: str, bound: FrozenSet[Value], unknown: Value) -> FrozenSet[Value]:
    """`bound` with the unknown argument `unknown` replaced by what `name`'s annotation
    describes, when that is only data; `bound` itself otherwise."""
    memo = ev.stores_memo
    key = ("leaf-annotation", fn.qual, name)
    described = memo.get(key)
    if described is None:
        described = memo[key] = _described(ev, fn, name)
    if not described:
        return bound
    return (bound - {unknown}) | described


def returned(ev: Inference, fn: FuncInfo, result: FrozenSet[Value]) -> FrozenSet[Value]:
    """`result`, what `fn` returns, with its values not inferred replaced by what `fn`'s return
    annotation describes, when that is only data (`-> torch.Tensor`); `result` otherwise."""
    if not any(isinstance(v, VUnknown) for v in result) or isinstance(fn.node, ast.Lambda) or fn.node.returns is None:
        return result
    memo = ev.stores_memo
    key = ("leaf-annotation", fn.qual, "->")
    described = memo.get(key)
    if described is None:
        described = memo[key] = _data_only(ev, fn, fn.node.returns)
    if not described:
        return result
    return frozenset(v for v in result if not isinstance(v, VUnknown)) | described


def _described(ev: Inference, fn: FuncInfo, name: str) -> FrozenSet[Value]:
    if isinstance(fn.node, ast.Lambda):
        return frozenset()
    a = fn.node.args
    ann = next((p.annotation for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == name), None)
    return frozenset() if ann is None else _data_only(ev, fn, ann)


def _data_only(ev: Inference, fn: FuncInfo, ann: ast.AST) -> FrozenSet[Value]:
    vals = ev.annotation(ann, Scope(fn.module, fn.parent, None), set())
    return vals if vals and all(_data(v, 0) for v in vals) else frozenset()


def _data(v: Value, depth: int) -> bool:
    if isinstance(v, VConst):
        return True
    if isinstance(v, VExt):
        return v.name.endswith("()") and v.name[:-2] in SCALAR_LEAVES
    if isinstance(v, VSeq) and depth < 2:  # `Tuple[Tensor, Tensor]`, `List[Optional[Tensor]]`
        return bool(v.elems) and v.items is None and v.keys is None and all(_data(e, depth + 1) for e in v.elems)
    return False
