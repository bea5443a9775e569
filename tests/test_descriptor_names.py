"""Project.descriptor_names: the attribute names a class body may bind to an in-tree descriptor
(semantics/descriptors.py asks about reads and stores of these only)."""


def _project(tmp_path, files: dict):
    from callgraph.index.project import Project
    from callgraph.roots import find_roots
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in files.items():
        (pkg / name).write_text(text)
    return Project(find_roots([str(pkg)], None))


DESCRIPTORS = {
    "__init__.py": "",
    "desc.py": (
        "class Lazy:\n"
        "    def __get__(self, obj, owner=None):\n"
        "        return 1\n"
        "class Faster(Lazy):\n"
        "    pass\n"
        "class Plain:\n"
        "    def get(self):\n"
        "        return 2\n"
        "    class Inner:\n"
        "        pass\n"
        "def __set__(x):\n"  # a module-level function is no descriptor's method
        "    return x\n"),
    "use.py": (
        "from .desc import Lazy, Faster, Plain\n"
        "class Holder:\n"
        "    kernel = Lazy()\n"
        "    fast: object = desc.Faster(1)\n"
        "    plain = Plain()\n"
        "    @Lazy\n"
        "    def loaded(self):\n"
        "        return 3\n"
        "    def method(self):\n"
        "        local = Lazy()\n"
        "        return local\n"),
}


def test_descriptor_names_by_text_and_by_parsed_classes(tmp_path):
    by_text = _project(tmp_path, DESCRIPTORS)
    assert by_text.descriptor_classes() == {"Lazy", "Faster"}
    assert by_text.descriptor_names() >= {"kernel", "fast", "loaded"}  # the text errs towards yes
    assert not by_text.descriptor_names() & {"plain", "method"}
    parsed = type(by_text)(by_text.roots)
    parsed.load_all()
    assert parsed.descriptor_classes() == {"Lazy", "Faster"}
    assert parsed.descriptor_names() == {"kernel", "fast", "loaded"}


def test_no_descriptor_names_without_descriptor_dunders(tmp_path):
    project = _project(tmp_path, {"__init__.py": "class A:\n    x = A()\n    def get(self): ...\n"})
    assert project.descriptor_names() == frozenset()
