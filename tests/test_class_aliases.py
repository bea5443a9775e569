"""index/class_aliases.py: which names a class body binds to its own defs by assignment."""
import ast

from callgraph.index import class_aliases, redefinitions


def _read(src: str):
    node = ast.parse(src).body[0]
    found = class_aliases.read(node, redefinitions.binds)
    return ({k: d.lineno for k, d in found.methods.items()},
            {k: {p: d.lineno for p, d in parts.items()} for k, parts in found.properties.items()})


def test_alias_holds_the_def_bound_when_it_runs():
    methods, _ = _read(
        "class C:\n"
        "    def f(self): ...\n"          # 2
        "    g = f\n"
        "    def f(self): ...\n"          # 4
        "    h = f\n"
        "    a = b = f\n")
    assert methods == {"g": 2, "h": 4, "a": 4, "b": 4}


def test_a_name_bound_again_later_is_no_alias():
    methods, props = _read(
        "class C:\n"
        "    def f(self): ...\n"
        "    g = f\n"
        "    g = 3\n"
        "    h = f\n"
        "    from m import h\n"
        "    k = f\n"
        "    def k(self): ...\n"
        "    p = property(f)\n"
        "    for p in (): pass\n")
    assert methods == {} and props == {}


def test_an_alias_under_a_condition_is_not_read_and_unbinds():
    methods, _ = _read(
        "class C:\n"
        "    def f(self): ...\n"
        "    g = f\n"
        "    if X:\n"
        "        g = None\n"
        "        h = f\n")
    assert methods == {}


def test_an_alias_of_an_outside_name_or_a_nested_def_is_none():
    methods, props = _read(
        "class C:\n"
        "    g = len\n"
        "    p = property(lambda self: 1)\n"
        "    def f(self):\n"
        "        def inner(): ...\n"
        "    q = property(inner)\n"
        "    r = property(fset=f)\n")
    assert methods == {} and props == {}


def test_property_parts_by_position_and_keyword():
    _, props = _read(
        "class C:\n"
        "    def a(self): ...\n"     # 2
        "    def b(self, v): ...\n"  # 3
        "    def c(self): ...\n"     # 4
        "    x = property(a, b, fdel=c)\n"
        "    y: property = builtins.property(fget=a)\n"
        "    z = property(a, len)\n")
    assert props == {"x": {"fget": 2, "fset": 3, "fdel": 4}, "y": {"fget": 2}}


def test_a_setter_def_does_not_unbind_the_property_name():
    methods, _ = _read(
        "class C:\n"
        "    @property\n"
        "    def x(self): ...\n"   # 3
        "    @x.setter\n"
        "    def x(self, v): ...\n"
        "    y = x\n")
    assert methods == {"y": 3}

