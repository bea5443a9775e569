"""Values known only by a type from outside the tree, or not known at all: never inert.

At run time, an object known only by a base type from outside the analysed roots
(`torch.nn.Module`, transformers' `PreTrainedModel`, a parameter's or attribute's annotation,
what an outside factory such as `AutoModel.from_config(...)` returns) may be an instance of any
subclass, the tree's own included: calling it may run any in-tree `forward`. Such a value is
*unknown* with its reason, so the call site stays unresolved and blocks a false "unreachable";
it is never an external object that cannot call back into the tree. Only types whose instances
do not run the tree's code (tensors, numbers, strings: `LEAF_TYPES`) stay external, and so do
instances of an outside class constructed by name (`nn.Linear(...)` is exactly an `nn.Linear`).
"""
from __future__ import annotations

from ..values import Value, VExt, VSeq, VUnknown

# Outside types whose instances are data: calls on them stay external (torch's tensor methods
# are leaves; an in-tree tensor subclass's overrides, such as SGLang's TransportProxyTensor,
# are not followed through an annotation).
LEAF_TYPES = frozenset({
    "torch.Tensor", "torch.dtype", "torch.device", "torch.Size", "torch.Generator", "torch.Stream",
    "torch.Event", "torch.cuda.Stream", "torch.cuda.Event", "torch.memory_format", "torch.layout",
    # the legacy typed tensors (`torch.LongTensor`: a tensor whose dtype is int64)
    "torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor", "torch.ByteTensor",
    "torch.CharTensor", "torch.ShortTensor", "torch.IntTensor", "torch.LongTensor", "torch.BoolTensor",
    "torch.cuda.FloatTensor", "torch.cuda.HalfTensor", "torch.cuda.LongTensor", "torch.cuda.IntTensor",
    "torch.cuda.BoolTensor", "torch.cuda.BFloat16Tensor",
    "numpy.ndarray", "numpy.dtype",
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes", "builtins.complex",
    "builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.frozenset",
    "builtins.slice", "builtins.range", "builtins.bytearray",
    "typing.List", "typing.Tuple", "typing.Dict", "typing.Set", "typing.FrozenSet",
    "pathlib.Path", "enum.Enum", "enum.IntEnum", "logging.Logger", "argparse.Namespace",
})

# Annotations read through: `Annotated[X, ...]`, `Final[X]`, `ClassVar[X]` describe an X.
WRAPPING_ANNOTATIONS = frozenset({"typing.Annotated", "typing_extensions.Annotated", "typing.Final",
                                  "typing_extensions.Final", "typing.ClassVar", "typing.Required",
                                  "typing.NotRequired", "typing_extensions.Required", "typing_extensions.NotRequired"})
# `type[X]`: the class X or a subclass (semantics/class_hierarchy.type_annotation).
TYPE_ANNOTATIONS = frozenset({"builtins.type", "typing.Type", "typing_extensions.Type"})
LITERAL_ANNOTATIONS = frozenset({"typing.Literal", "typing_extensions.Literal"})
# Containers an annotation describes by what they hold (`list[X]`: a list of X).
SEQUENCE_ANNOTATIONS = frozenset({"builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset",
                                  "typing.List", "typing.Tuple", "typing.Set", "typing.FrozenSet",
                                  "typing.Sequence", "typing.Iterable", "typing.Iterator", "typing.Collection",
                                  "collections.abc.Sequence", "collections.abc.Iterable", "collections.abc.Iterator",
                                  "collections.abc.Collection", "typing.MutableSequence", "collections.deque",
                                  "typing.Deque"})
MAPPING_ANNOTATIONS = frozenset({"builtins.dict", "typing.Dict", "typing.Mapping", "typing.MutableMapping",
                                 "collections.abc.Mapping", "collections.abc.MutableMapping", "collections.OrderedDict",
                                 "typing.OrderedDict", "collections.defaultdict", "typing.DefaultDict"})

# Attributes every torch.nn.Module has (torch 2.x): an attribute of an in-tree module class that
# the tree never assigns and that is not one of these was set where the tree's class code does
# not show it (`add_module`, `setattr` with a computed name, an assignment from outside).
NN_MODULE_API = frozenset({
    "training", "forward", "register_buffer", "register_parameter", "add_module", "register_module",
    "get_submodule", "set_submodule", "get_parameter", "get_buffer", "get_extra_state", "set_extra_state",
    "apply", "cuda", "ipu", "xpu", "mtia", "cpu", "type", "float", "double", "half", "bfloat16", "to_empty",
    "to", "register_full_backward_pre_hook", "register_backward_hook", "register_full_backward_hook",
    "register_forward_pre_hook", "register_forward_hook", "state_dict", "register_state_dict_pre_hook",
    "register_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
    "load_state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "children",
    "named_children", "modules", "named_modules", "train", "eval", "requires_grad_", "zero_grad",
    "share_memory", "extra_repr", "compile", "dump_patches", "call_super_init", "T_destination",
    "_parameters", "_buffers", "_modules", "_version", "_apply", "_named_members", "_load_from_state_dict",
    "_save_to_state_dict", "_get_name", "_call_impl", "_wrapped_call_impl", "_forward_hooks",
    "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
    "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
    "_non_persistent_buffers_set", "_is_full_backward_hook", "_replicate_for_data_parallel",
    "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_compiled_call_impl",
}) | frozenset(dir(object))

# Markers the evaluator gives values it did not follow (an item or element of an outside
# object, an outside value passed as an argument, ...): what they hold is not known. So is
# `<object>.x`, an attribute of a value the tree only sets to None or a literal.
OPAQUE_MARKERS = frozenset({"<external value>", "<item>", "<element>", "<unpacked>", "<expr>",
                            "<operator result>", "<call result>"})


# Containers an annotation may name bare (`xs: list`, `kw: Dict`), saying nothing of what they hold.
BARE_CONTAINERS = (SEQUENCE_ANNOTATIONS | MAPPING_ANNOTATIONS) & LEAF_TYPES


def bare_container(name: str) -> Value | None:
    """A container an annotation names without what it holds (`xs: list`, `kw: dict`), as
    `list[Any]` reads: a container whose elements (a mapping's values) may be any object, the
    tree's own included; None for another name. Before, its elements were outside leaves, and
    `for x in xs: x.step()` was a false "unreachable"."""
    if name not in BARE_CONTAINERS:
        return None
    held = VUnknown(f"an element of a bare '{_short(name)}' annotation: any object may be there")
    return VSeq(frozenset({held}), "dict" if name in MAPPING_ANNOTATIONS else "list")


def annotated(name: str) -> Value:
    """An instance of the outside class `name`, as an annotation names it: any subclass."""
    if name in LEAF_TYPES:
        return VExt(name + "()")
    return VUnknown(f"{_short(name)} known only by an annotation: any subclass may be there, the tree's own included")


def structural(qual: str) -> Value:
    """An instance of the in-tree Protocol `qual`, as an annotation names it: any class with its
    methods, whether or not it derives from it."""
    return VUnknown(f"{_short(qual)} is a Protocol: any class with its methods may be there")


def opaque_call(name: str) -> str | None:
    """Why calling the outside value `name` may run the tree's code (None: it cannot, as far as
    the value's name tells): the result of an outside function or factory, a marker value, or
    the `forward` of either. An instance of an outside class made by name (`torch.nn.Linear()`)
    runs that class's own code."""
    head, dot, attr = name.rpartition(".")
    if dot and attr in ("forward", "__call__") and _opaque(head):
        return _why(head)
    return _why(name) if _opaque(name) else None


def _opaque(name: str) -> bool:
    if name in OPAQUE_MARKERS or name.startswith("<object>"):
        return True
    if not name.endswith("()"):
        return False
    head = name[:-2]
    if "(" in head or head.startswith("<"):
        return False  # a method of an outside object's result (`torch.cat().view()`): a leaf
    last = head.rsplit(".", 1)[-1]
    return not last[:1].isupper()  # a function's result; a CapWords class's is its instance


def _why(name: str) -> str:
    if name.startswith("<object>."):
        return only_literals(name.split(".", 2)[1]).why
    if name.endswith("()") and not name.startswith("<"):
        return f"the result of {name[:-2]}(...) called: an outside function may return an in-tree module"
    return f"an outside value ({name}) called: it may be an in-tree module"


def module_attribute(cls_qual: str, attr: str) -> Value | None:
    """The value of `attr` on an instance of an in-tree `nn.Module` subclass whose class code
    never assigns it, or None when `attr` is torch.nn.Module's own."""
    if attr in NN_MODULE_API:
        return None
    return VUnknown(f"{_short(cls_qual)}.{attr} is never assigned by the class's code "
                    "(add_module, setattr with a computed name, or set from outside?)")


def only_literals(attr: str | None = None) -> Value:
    """A value the tree's code only ever sets to None or a literal, yet called or read into."""
    what = f"'.{attr}' of a value" if attr else "a value"
    return VUnknown(f"{what} the tree only sets to None or a literal: its run-time value is set elsewhere")


def _short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]


# How the tree names torch's module class, as an outside base.
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module"})


def module_only(cm, classes) -> bool:
    """Whether the in-tree `classes`' only outside bases are torch.nn.Module (whose own are
    `object`): an instance of them is a module, never a tensor or other outside value."""
    return all(b in MODULE_BASES for k in classes for b in cm.external_bases(k))
