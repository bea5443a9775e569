"""Regenerate the pictures in docs/pictures/ from the bundled fixture trees.

    python docs/make_pictures.py           # rewrite docs/pictures/*.dot and *.svg
    python docs/make_pictures.py --check   # exit 1 if the committed pictures are stale

Each picture is committed twice: the `.dot` (exactly what callgraph draws; byte-compared by the
check) and the `.svg` rendered from it by Graphviz (compared by the text it shows, since layout
coordinates differ between Graphviz versions). tests/render/test_render_docs.py runs the check,
so a change in the engine or the renderer that alters a picture fails CI until this is re-run.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PICTURES = REPO / "docs" / "pictures"
SGLANG = "fixtures/trees/sglang_mini/python/sglang/srt"
HF = "fixtures/trees/hf_mini"


@dataclass(frozen=True)
class Picture:
    name: str
    entry: str
    target: str
    root: str
    depth: int | None = None   # None: the proof alone (`reach --dot`); N: `graph --depth N --to`

    def command(self) -> str:
        if self.depth is None:
            return (f"callgraph reach {self.entry} {self.target} --root {self.root} "
                    f"--dot docs/pictures/{self.name}.svg")
        return (f"callgraph graph {self.entry} --to {self.target} --depth {self.depth} "
                f"--root {self.root} -o docs/pictures/{self.name}.svg")


ALL = (
    Picture("flagship", "KimiK25ForConditionalGeneration", "DeepseekV2Model", SGLANG),
    Picture("flagship_neighbourhood", "KimiK25ForConditionalGeneration", "DeepseekV2Model",
            SGLANG, depth=3),
    Picture("llava_unknown", "LlavaForConditionalGeneration", "LlamaModel", HF),
)


def draw(picture: Picture, outs: list[Path]) -> list[Path]:
    """Write one picture to each of `outs` (suffix picks the format) the way the CLI would."""
    from callgraph.api import Analysis
    from callgraph.render import render_graph_file, render_proof_file

    analysis = Analysis(roots=[str(REPO / picture.root)], use_cache=False)
    entry, target = analysis.resolve(picture.entry), analysis.resolve(picture.target)
    proof = analysis.reach(entry, target)
    if picture.depth is None:
        return [render_proof_file(proof, analysis, out) for out in outs]
    view = analysis.callees(entry, picture.depth)
    return [render_graph_file(view, analysis, out, highlight=proof, depth=picture.depth)
            for out in outs]


def svg_texts(svg: str) -> list[str]:
    """The text an SVG shows, in order (Graphviz escapes `-` and friends as entities)."""
    return [html.unescape(t) for t in re.findall(r">([^<]*)</text>", svg)]


def regenerate(folder: Path = PICTURES) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for picture in ALL:
        written += draw(picture, [folder / f"{picture.name}{s}" for s in (".dot", ".svg")])
    return written


def stale(folder: Path = PICTURES) -> list[str]:
    """Why the committed pictures differ from fresh ones; [] when they are current."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        regenerate(fresh)
        for picture in ALL:
            for suffix in (".dot", ".svg"):
                old, new = folder / f"{picture.name}{suffix}", fresh / f"{picture.name}{suffix}"
                if not old.exists():
                    problems.append(f"{old.relative_to(REPO)} is missing")
                    continue
                a, b = old.read_text(encoding="utf-8"), new.read_text(encoding="utf-8")
                same = a == b if suffix == ".dot" else svg_texts(a) == svg_texts(b)
                if not same:
                    problems.append(f"{old.relative_to(REPO)} is stale")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether they are current")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(f"make_pictures: {line}; run python docs/make_pictures.py", file=sys.stderr)
        return 1 if problems else 0
    for path in regenerate():
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
