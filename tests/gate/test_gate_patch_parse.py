"""Unified diff parsing: old-side lines only, since the gate runs before the patch is applied."""
from __future__ import annotations

from gate_helpers import CHECK_FIXTURES

from callgraph.gate.patch import parse_diff, touched_functions


def test_dump_patch_lines():
    changes = parse_diff((CHECK_FIXTURES / "patch_two_functions" / "dump.patch").read_text())
    assert [c.old_path for c in changes] == ["python/sglang/srt/models/deepseek_v2.py",
                                            "python/sglang/srt/models/qwen2.py"]  # -p1, as git
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
    assert m.old_path == "pkg/m.py" and m.removed == [11, 12]
    assert [i[:2] for i in m.inserted] == [(12, 13)]
    assert new.old_path is None and new.new_path == "pkg/new.py"


class FakeIndex:
    """function_at over one file: f spans lines 1-5, g spans 8-12."""

    def __init__(self, root):
        self.roots = (str(root),)

    def function_at(self, path, line):
        return "pkg.m.f" if 1 <= line <= 5 else "pkg.m.g" if 8 <= line <= 12 else None


def test_insertions_between_functions_touch_neither(tmp_path):
    (tmp_path / "pkg").mkdir()
    lines = ["x"] * 12
    lines[4:7] = ["    return 1", "", ""]
    lines[8:10] = ["    y = 1", "    z = 2"]
    (tmp_path / "pkg" / "m.py").write_text("\n".join(lines) + "\n")
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
    got = touched_functions(parse_diff(diff), FakeIndex(tmp_path), tmp_path)
    touched, notes = got.functions, got.notes
    assert touched == {"pkg.m.g": ["pkg/m.py:9"]}
    assert notes == ["pkg/m.py:5: change outside any function"]


def test_hunks_placed_by_content_and_paths_by_their_tail(tmp_path):
    """Issue 16: a diff with git's prefixes written inside the tree, or whose line numbers
    drifted, checked nothing (or the wrong function). Paths are read -p1 and matched by their
    tail; a hunk goes where its old lines are, nearest its stated line; one that is nowhere
    is reported unchecked, never guessed."""
    (tmp_path / "pkg").mkdir()
    body = ["def f():"] + ["    a = 0"] * 4 + ["", "", "def g():", "    y = 1", "    z = 2", "    w = 3", ""]
    (tmp_path / "pkg" / "m.py").write_text("\n".join(body) + "\n")
    diff = """--- a/m.py
+++ b/m.py
@@ -2,2 +2,3 @@
     y = 1
+    dump(y)
     z = 2
@@ -40,2 +41,2 @@
     q = 1
-    r = 2
"""
    got = touched_functions(parse_diff(diff), FakeIndex(tmp_path), tmp_path / "elsewhere")
    assert got.functions == {"pkg.m.g": ["pkg/m.py:9"]}
    assert "pkg/m.py: hunk @@ -2 @@ found at line 9 (offset +7)" in got.notes
    assert got.unchecked == ["pkg/m.py: hunk @@ -40 @@ does not match the tree "
                             "(its old lines are nowhere in the file)"]


def test_a_path_two_files_end_with_is_ambiguous(tmp_path):
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.py").write_text("def f():\n    a = 1\n")
    diff = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    a = 1\n+    a = 2\n"
    got = touched_functions(parse_diff(diff), FakeIndex(tmp_path), tmp_path / "elsewhere")
    assert got.functions == {} and got.unchecked == ["m.py: ambiguous path"]
    assert got.notes[0].startswith("m.py: matches 2 analysed files (one/m.py, two/m.py)")
