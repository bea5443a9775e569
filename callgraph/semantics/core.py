"""Rules whose code is part of the dispatch and the exploration themselves.

`bound` (a `--bind` answer, read before a call is dispatched), `class-hierarchy` (the overrides
a receiver known by its base type may run, in the class and call lookups), `jedi` (the oracle
asked about a blocked proof), `protocol` (implicit dunder calls the exploration adds) and
`external` (calls out of the tree, recorded by the exploration) are registered here for their
name (what an edge's `rule` or `via` records), their place in the registry's precedence and the
behaviour they model; their code is where `where` says. A rule with code of its own is a module
of `semantics/` (`mro.py`, `init_attribute.py`...).
"""
from __future__ import annotations

from .rule import Rule


class Bound(Rule):
    """a factory resolved by a user binding (`--bind AutoModel.from_config=LlamaModel`)"""

    name = "bound"
    where = ("infer/calls.py", "semantics/constructor.py")


class ClassHierarchy(Rule):
    """a receiver known only by a base type (an annotation) dispatches to every override in the tree"""

    name = "class-hierarchy"
    where = ("infer/classes.py", "semantics/module_call.py")


class Jedi(Rule):
    """Jedi's `infer` answered where the index could not"""

    name = "jedi"
    where = ("jedi_oracle.py", "query.py")


class IterProtocol(Rule):
    """implicit dunder calls: `for x in obj` calls `obj.__iter__()` and the iterator's `__next__()`"""

    name = "protocol"
    where = ("index/scopes.py", "explore.py")


class External(Rule):
    """(whole-tree export only) a call into code outside the analysed roots, by its import name
    (`builtins.len`, `torch.cat`); a method of an instance of an external class by the class
    (`a = ext.Cls(); a.fun()` is `ext.Cls.fun`, a class by PEP 8's CapWords); the external
    base's `__init__` when an in-tree class without one is constructed; a builtin container's
    methods (`builtins.dict.items`; the stores `append`/`update` are modelled as data, not calls)"""

    name = "external"
    where = ("explore.py", "infer/calls.py", "semantics/constructor.py", "semantics/containers.py")


BOUND, CLASS_HIERARCHY, JEDI = Bound(), ClassHierarchy(), Jedi()
PROTOCOL, EXTERNAL = IterProtocol(), External()
