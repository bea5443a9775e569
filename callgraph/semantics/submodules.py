"""`submodules`: torch.nn.Module's methods that hand out a module's submodules.

`m.modules()`, `m.named_modules()`, `m.children()`, `m.named_children()` and
`m.get_submodule(name)` give the modules held below `m` (and `m` itself, for `modules`): those
its class code assigns, and those `add_module`, `setattr` or an outside caller put there.
Before, these were an outside method's result, whose elements are outside leaves, so `for
name, m in self.named_modules(): m.step()` ran no `step`: a false "unreachable" (vLLM's and
SGLang's weight loaders and quantisation passes walk modules this way). The submodules are not
listed: each is any module, the tree's own included (unknown, with its reason), so a call on
one stays unresolved and names why; the names `named_*` pair them with are strings. The
receiver is an in-tree module (read as its outside base's method, `torch.nn.Module.modules`)
or one of torch's made by name (`nn.Sequential(block)`, which may hold in-tree modules).
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import SOME_LITERAL, Value, VExt, VSeq, VUnknown
from .rule import Call, Outcome, Rule

# method -> what one element is: "module", or "named" for a (name, module) pair; `get_submodule`
# gives the module itself.
METHODS = {"modules": "module", "children": "module", "named_modules": "named", "named_children": "named",
           "get_submodule": "one"}


class Submodules(Rule):
    """torch.nn.Module's `modules()`, `named_modules()`, `children()`, `named_children()` and
    `get_submodule(name)` give the modules held below the receiver, each any module, the
    tree's own included (unknown: not listed), paired with their names by `named_*`"""

    name = "submodules"
    where = ("semantics/submodules.py",)
    kinds = (VExt,)
    on_edges = False  # it makes values; a call on a submodule is named by its own rule

    def applies(self, call: Call) -> bool:
        head, _, attr = call.value.name.rpartition(".")
        return attr in METHODS and _torch_module(head)

    def apply(self, call: Call) -> Outcome:
        return given(call.value.name.rpartition(".")[2])


RULE = Submodules()


def given(attr: str) -> FrozenSet[Value]:
    """What the module method `attr` (one of `METHODS`) gives: any module, in a list, in
    (name, module) pairs, or alone. Also asked by `containers.py` for a torch container's own
    (`layers.modules()` of an nn.ModuleList)."""
    held = VUnknown(f"a module {attr}() gives: any module, the tree's own included")
    kind = METHODS[attr]
    if kind == "one":
        return frozenset({held})
    if kind == "module":
        return frozenset({VSeq(frozenset({held}), "list")})
    pair = VSeq(frozenset({SOME_LITERAL, held}), "tuple", items=(frozenset({SOME_LITERAL}), frozenset({held})))
    return frozenset({VSeq(frozenset({pair}), "list")})


def _torch_module(head: str) -> bool:
    """Whether `head` names torch's module class or one of torch.nn's, or an instance of one made
    by name (`torch.nn.Sequential()`)."""
    if head.endswith("()"):
        head = head[:-2]
    return "(" not in head and (head.startswith(("torch.nn.", "nn.")) or head.endswith(".nn.Module"))
