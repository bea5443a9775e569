"""`registry`: a framework's registry factory builds the class its table names for a key.

`AutoModel.from_config(config.text_config)` builds `MODEL_MAPPING_NAMES[text_config.model_type]`,
`init_vllm_registered_model(..., architectures=["DeepseekV2ForCausalLM"])` the class vLLM's
registry tables name, `ModelRegistry.resolve_model_cls(archs)` returns SGLang's `EntryClass` of
that name. The tables are read as data (`callgraph/registries/`); the key is a literal at the
site, or read from the model config (--model-config). A site no key decides is unknown, with the
key expression in its reason, and remembered so the answer can list the keys that would reach.
"""
from __future__ import annotations

import ast
from ..values import Lit, VClass, VConst, VSeq, VUnknown, Value
from .constructor import construct
from .rule import CallArgs, Rule

UNDECIDED = "registry lookup at "


class Registry(Rule):
    """a registry factory builds the class its table names for the key (`AutoModel.from_config(config.text_config)`:
    `MODEL_MAPPING_NAMES[text_config.model_type]`; vLLM's `init_vllm_registered_model(..., architectures=[...])`;
    SGLang's `ModelRegistry.resolve_model_cls`), tables read from the tree as data; the key is a literal at the
    site or comes from `--model-config`, and the edge records it (`key`)"""

    name = "registry"
    where = ("semantics/registry.py", "registries/__init__.py")


RULE = Registry()


def dispatch(calls, found, node: ast.Call, scope, d, tags: set, results: set) -> set:
    """The values of a registry factory call (replacing what its code, or an outside factory,
    would be inferred to return); the classes it builds are targets of `d` with the key."""
    site, adapter = found
    chosen = [(q, f"{site.key_expr}={k}") for k in site.keys or () for q in adapter.candidates(site, k)]
    where = f"{scope.mod.display}:{node.lineno}:{node.col_offset}"
    if not chosen:
        why = (f"{UNDECIDED}{where}: {site.key_expr} decides what {site.factory} builds"
               + (f" ({', '.join(site.keys)} not in the tree's {site.table})" if site.keys else "")
               + "; pass --model-config or --bind")
        calls.ev.registries.undecided[where] = found
        d.returning.clear()
        d.unresolved[:] = [why]
        return {v for v in results if not isinstance(v, VUnknown)} | {VUnknown(why)}
    # not a tag: the factory's own code (an in-tree `from_config`) keeps its `direct` edge
    d.returning.clear()
    d.unresolved.clear()
    out: set[Value] = set()
    if site.returns == "class-tuple":  # (cls, arch): a class, called later where it is used
        classes = frozenset(VClass(q) for q, _ in chosen)
        arch = VConst(Lit("str"))  # the architecture's name
        out.add(VSeq(classes | {arch}, "tuple", (classes, frozenset({arch}))))
        return out
    args = constructor_args(site.framework, calls.args(node, scope, set()))
    for qual, key in chosen:
        out |= construct(calls, qual, args, d, rule="registry", key=key)
    return out


def constructor_args(framework: str, args: CallArgs) -> CallArgs:
    """What the built class's __init__ is given: transformers passes the factory's arguments on
    (`cls(config, **kwargs)`); vLLM's `initialize_model` calls `model_class(vllm_config=...,
    prefix=...)` with the factory's own two."""
    if framework != "vllm":
        return args
    kw = {k: v for k, v in args.kw.items() if k in ("vllm_config", "prefix")}
    if args.pos and "vllm_config" not in kw:
        kw["vllm_config"] = args.pos[0]
    return CallArgs(kw=kw)
