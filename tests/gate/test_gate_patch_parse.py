"""Unified diff parsing: old-side lines only, since the gate runs before the patch is applied."""
from __future__ import annotations

from gate_helpers import CHECK_FIXTURES

from callgraph.gate.patch import parse_diff, touched_functions


def test_dump_patch_lines():
    changes = parse_diff((CHECK_FIXTURES / "patch_two_functions" / "dump.patch").read_text())
    assert [c.old_path for c in changes] == ["a/python/sglang/srt/models/deepseek_v2.py",
                                            "a/python/sglang/srt/models/qwen2.py"]
    deepseek, qwen = changes
    assert deepseek.removed == [] and [i[:2] for i in deepseek.inserted] == [(5, 6), (42, 43)]
    assert [i[:2] for i in qwen.inserted] == [(30, 31)]


def test_removed_lines_new_files_and_no_newline_markers():
    diff = """diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py\t2024-01-01 00:00:00
+++ b/pkg/m.py\t2024-01-01 00:00:00
@@ -10,3 +10,2 @@ def f():
     a = 1
-    b = 2
-    c = 3
+    c = 4
\\ No newline at end of file
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+def g():
+    pass
"""
    m, new = parse_diff(diff)
    assert m.old_path == "a/pkg/m.py" and m.removed == [11, 12]
    assert [i[:2] for i in m.inserted] == [(12, 13)]
    assert new.old_path is None and new.new_path == "b/pkg/new.py"


class FakeIndex:
    """function_at over one file: f spans lines 1-5, g spans 8-12."""

    def __init__(self, root):
        self.roots = (str(root),)

    def function_at(self, path, line):
        return "pkg.m.f" if 1 <= line <= 5 else "pkg.m.g" if 8 <= line <= 12 else None


def test_insertions_between_functions_touch_neither(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x\n" * 12)
    diff = """--- a/pkg/m.py
+++ b/pkg/m.py
@@ -5,3 +5,6 @@
     return 1
+
+def h():
+    pass
 
 
@@ -9,2 +12,3 @@
     y = 1
+    dump(y)
     z = 2
"""
    touched, notes = touched_functions(parse_diff(diff), FakeIndex(tmp_path), tmp_path)
    assert touched == {"pkg.m.g": ["pkg/m.py:9"]}
    assert notes == ["pkg/m.py:5: change outside any function"]
