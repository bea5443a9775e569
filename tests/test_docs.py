"""Docs checks (issue 16): the sample outputs in the docs are what the commands print, the docs
link nothing outside the repository, the install lines name this project's distribution, and
tests/run.sh installs only into the environment it runs from."""
from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

import pytest

from callgraph.cli import main
from callgraph.model import GraphView, Proof

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SAMPLE = re.compile(r"<!-- sample: (\S+): (.+?) -->\n```\n(.*?)```\n", re.S)
SAMPLES = [(doc, m[1], m[2], m[3]) for doc in DOCS for m in SAMPLE.finditer(doc.read_text())]


def test_there_are_samples():
    assert len(SAMPLES) >= 2  # docs/ci.md's contracts report and patch report


@pytest.mark.parametrize("doc,folder,args,text", SAMPLES, ids=[f"{s[0].name}:{s[2]}" for s in SAMPLES])
def test_a_sample_is_what_the_command_prints(doc, folder, args, text, monkeypatch, capsys):
    monkeypatch.chdir(REPO / folder)
    main([*shlex.split(args), "--no-cache"])
    assert capsys.readouterr().out == text, f"{doc.name}: the sample of `callgraph {args}` is stale"


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_docs_link_nothing_outside_the_repository(doc):
    text = doc.read_text()
    assert "../shared" not in text and "DESIGN.md" not in text
    for target in re.findall(r"\]\(([^)#]+)", text):
        if "://" not in target:
            assert (doc.parent / target).exists(), f"{doc.name}: broken link {target}"


def test_install_lines_name_this_distribution():
    meta = configparser.ConfigParser()
    meta.read(REPO / "setup.cfg")
    assert meta["metadata"]["name"] == "callgraph-torch"  # PyPI's `callgraph` is another project
    assert "callgraph = callgraph.launch:entry" in meta["options.entry_points"]["console_scripts"]
    for doc in DOCS:  # every command shown (in a code block) installs this project, not PyPI's
        for block in re.findall(r"```[a-z]*\n(.*?)```", doc.read_text(), re.S):
            for line in block.splitlines():
                assert not re.search(r"pip install ['\"]?callgraph\b(?!-torch)", line), f"{doc.name}: {line}"


def test_the_pre_commit_hook_is_defined_here():
    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "- id: callgraph-check" in text and "entry: callgraph check" in text
    assert "id: callgraph-check" in (REPO / "docs" / "ci.md").read_text()


def test_run_sh_installs_into_its_own_environment():
    script = (REPO / "tests" / "run.sh").read_text()
    code = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    assert not any("sudo " in line for line in code if not line.lstrip().startswith("echo"))
    pips = [line for line in code if "pip install" in line]
    assert pips and all('"$PY" -m pip install' in line for line in pips)
    assert "CALLGRAPH_TESTS_ANY_PYTHON=1" in (REPO / ".ci" / "run").read_text()
    assert "virtual environment" in (REPO / "README.md").read_text()


def test_the_vocabulary_doc_has_the_keys_the_model_writes():
    text = (REPO / "docs" / "vocabulary.md").read_text()
    for key in Proof.__dataclass_fields__:
        assert f"`{key}`" in text or f'"{key}"' in text, key
    for key in GraphView.__dataclass_fields__:
        assert f'"{key}"' in text, key
