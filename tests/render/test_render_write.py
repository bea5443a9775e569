"""Writing pictures: formats, Graphviz present or missing, nothing partial left behind."""
from __future__ import annotations

import html
import os
import re
import shutil
import stat

import pydot
import pytest
from render_cases import PATH

from callgraph.cli import main
from callgraph.errors import RenderError
from callgraph.render import proof_picture, write
from callgraph.render.labels import node_label

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz not installed (tests/run.sh installs it)")


def svg_texts(svg: str) -> set[str]:
    """The text lines Graphviz drew (it escapes `-` and friends as entities)."""
    return {html.unescape(t) for t in re.findall(r">([^<]*)</text>", svg)}


@pytest.fixture
def no_graphviz(tmp_path, monkeypatch):
    """A PATH holding no `dot` (and nothing else)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


def test_dot_file_needs_no_graphviz(reached, nodes, tmp_path, no_graphviz):
    out = write(proof_picture(reached, nodes), tmp_path / "proof.dot")
    (parsed,) = pydot.graph_from_dot_data(out.read_text())
    assert parsed.get_name() == "callgraph"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-bin", "proof.dot"]


@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_missing_graphviz_is_one_clear_error_and_leaves_nothing(reached, nodes, tmp_path,
                                                                no_graphviz, suffix):
    out = tmp_path / f"proof{suffix}"
    with pytest.raises(RenderError, match="not found on PATH.*apt-get install graphviz"):
        write(proof_picture(reached, nodes), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-bin"]


def test_missing_graphviz_through_the_cli_exits_3_before_any_analysis(tmp_path, no_graphviz,
                                                                      capsys):
    out = tmp_path / "g.svg"
    assert main(["graph", "Anything", "--root", str(tmp_path), "-o", str(out)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "install Graphviz" in err[0]
    assert not out.exists()


def test_failing_graphviz_keeps_the_old_picture_and_no_temp_file(reached, nodes, tmp_path):
    fake = tmp_path / "fake-dot"
    fake.write_text("#!/bin/sh\n# writes half a picture, then fails\n"
                    "for a; do out=$a; done\necho '<svg' > \"$out\"\n"
                    "echo 'Error: syntax error in line 1' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "proof.svg"
    out.write_text("the good old picture")
    with pytest.raises(RenderError, match="Graphviz failed \\(exit 1\\): Error: syntax error"):
        write(proof_picture(reached, nodes), out, dot_binary=str(fake))
    assert out.read_text() == "the good old picture"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-dot", "proof.svg"]


@pytest.mark.parametrize("name", ["proof.pdf", "proof"])
def test_unknown_suffix_is_a_render_error(reached, nodes, tmp_path, name):
    with pytest.raises(RenderError, match="use a file name ending in .dot, .svg or .png"):
        write(proof_picture(reached, nodes), tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_unknown_suffix_through_the_cli_exits_3(tmp_path, capsys):
    assert main(["graph", "Anything", "-o", str(tmp_path / "g.jpeg")]) == 3
    assert "unknown picture format '.jpeg'" in capsys.readouterr().err


@needs_dot
def test_svg_contains_the_path_labels(reached, nodes, tmp_path):
    out = write(proof_picture(reached, nodes), tmp_path / "proof.svg")
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and svg.rstrip().endswith("</svg>")
    texts = svg_texts(svg)
    for q in {h.caller for h in PATH} | {h.callee for h in PATH}:
        assert node_label(q, nodes[q].file) in texts
    assert {"line 14", "param-binding", "sglang/srt/managers/mm_utils.py"} <= texts
    assert oct(os.stat(out).st_mode & 0o777) != oct(0o600)   # not mkstemp's private mode


@needs_dot
def test_png_is_a_png(reached, nodes, tmp_path):
    out = write(proof_picture(reached, nodes), tmp_path / "proof.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
