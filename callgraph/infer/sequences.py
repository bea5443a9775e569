"""The evaluator's containers: literals, comprehensions, iteration, unpacking and subscripts.

Lists, tuples, sets, dicts and comprehensions evaluate to container values (`VSeq`) that keep
positions and literal keys where the source gives them, nested at most `values.MAX_SEQ_DEPTH`
deep; iterating, unpacking and indexing read them back (what one read of a container value
gives is the `container` rule's, `semantics/containers.py`; here is the walk over value kinds).
A mixin of `Evaluator`: these methods are the `_eval_<node>` of the container nodes, and
`iterate`/`unpack` of the protocol.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..semantics import containers, iterators, triton_launch
from ..semantics.computed_getattr import added
from ..semantics.container_subclass import held, not_iterable
from ..semantics.protocol import Scope
from ..values import EMPTY, Value, VClass, VExt, VFunc, VInst, VSeq, VUnknown, cap


class Sequences:
    def iterate(self, values: FrozenSet[Value], tags: set[str]) -> FrozenSet[Value]:
        out: set[Value] = set()
        for v in values:
            if isinstance(v, VSeq):
                out |= iterators.elements(v, tags) if v.kind == iterators.KIND else containers.elements(v, tags)
            elif isinstance(v, VUnknown):
                out.add(v)
            elif isinstance(v, VInst):
                out |= self.calls.dunder(v, "__iter__", tags, iterate=True)
            else:
                out.add(VExt("<element>"))
        return frozenset(out)

    def unpack(self, values: FrozenSet[Value], path: tuple, tags: set[str]) -> FrozenSet[Value]:
        for step in path:
            nxt: set[Value] = set()
            for v in values:
                if isinstance(v, VSeq):
                    nxt |= containers.unpacked(v, step, tags)
                elif isinstance(v, VUnknown):
                    nxt.add(v)
                elif not not_iterable(self.classes, v):  # unpacking a function or a plain class raises
                    nxt.add(VExt("<unpacked>"))
            values = frozenset(nxt)
        return values

    def _eval_Subscript(self, node: ast.Subscript, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        base = self.eval(node.value, scope, tags)
        out: set[Value] = set()
        for v in base:
            if isinstance(v, VSeq):
                out |= containers.item(v, node.slice, tags)
            elif isinstance(v, VUnknown):
                out.add(v)
            elif isinstance(v, VInst):
                key = self.eval(node.slice, scope, tags) if held(v) else None  # container_subclass.py
                out |= self.calls.dunder(v, "__getitem__", tags, key=key)
            elif isinstance(v, VClass):
                out.add(v)  # Generic[T] and friends
            elif isinstance(v, VFunc) and (launch := triton_launch.launched(self, v, tags)) is not None:
                out |= launch  # `kernel[grid]` of a @triton.jit function: its launcher
            else:
                out.add(VExt("<item>"))
        return frozenset(out)

    def _eval_List(self, node, scope, tags):
        return self._seq([self.eval(e, scope, tags) if not isinstance(e, ast.Starred) else self.iterate(self.eval(e.value, scope, tags), tags) for e in node.elts], "list", node, scope, tags)

    def _eval_Tuple(self, node, scope, tags):
        return self._seq([self.eval(e, scope, tags) if not isinstance(e, ast.Starred) else self.iterate(self.eval(e.value, scope, tags), tags) for e in node.elts], "tuple", node, scope, tags)

    def _eval_Set(self, node, scope, tags):
        # a set keeps no positions: its iteration order is not its source order
        seq = next(iter(self._eval_List(node, scope, tags)))
        return frozenset({VSeq(seq.elems, "set")})

    def _seq(self, items, kind, node, scope, tags):
        starred = any(isinstance(e, ast.Starred) for e in node.elts)
        elems = frozenset().union(*items) if items else EMPTY
        return frozenset({VSeq(cap(elems), kind, None if starred else tuple(cap(i) for i in items))})

    def _eval_Dict(self, node: ast.Dict, scope, tags):
        keys, elems = [], set()
        exact = True
        for k, val in zip(node.keys, node.values):
            vv = self.eval(val, scope, tags)
            if k is None:
                exact = False
                for m in vv:
                    if isinstance(m, VSeq):
                        elems |= m.elems
                continue
            elems |= vv
            if isinstance(k, ast.Constant) and k.value is not ...:  # `{1: f, "1": g}`: two keys
                keys.append((k.value, cap(vv)))
            else:
                exact = False
        if exact:  # a repeated key keeps its last value, as at run time
            table = dict(keys)
            return frozenset({VSeq(cap(frozenset().union(*table.values())), "dict", None, tuple(table.items()))})
        return frozenset({VSeq(cap(frozenset(elems)), "dict", None, None)})

    def _comp(self, node, scope, tags, kind):
        elt = node.elt if not isinstance(node, ast.DictComp) else node.value
        return frozenset({VSeq(cap(self.eval(elt, scope, tags)), kind)})

    def _eval_ListComp(self, node, scope, tags):
        return self._comp(node, scope, tags, "list")

    def _eval_SetComp(self, node, scope, tags):
        return self._comp(node, scope, tags, "set")

    def _eval_GeneratorExp(self, node, scope, tags):
        return self._comp(node, scope, tags, "generator")

    def _eval_DictComp(self, node, scope, tags):
        return self._comp(node, scope, tags, "dict")

    def _eval_Starred(self, node: ast.Starred, scope, tags):
        return self.iterate(self.eval(node.value, scope, tags), tags)

    def _eval_BinOp(self, node: ast.BinOp, scope, tags):
        left = self.eval(node.left, scope, tags)
        if isinstance(node.op, ast.Add):
            right = self.eval(node.right, scope, tags)
            seqs = [v for v in left | right if isinstance(v, VSeq)]
            if seqs:  # list concatenation keeps the layers of both sides
                return frozenset({VSeq(cap(frozenset().union(*(s.elems for s in seqs))), "list")})
            spelled = added(left, right)  # "forward_" + name: semantics/computed_getattr.py
            if spelled is not None:
                return spelled
        return frozenset({VExt("<operator result>")})
