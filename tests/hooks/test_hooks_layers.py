import pytest

pytest.importorskip("torch")

from callgraph.errors import CallgraphError  # noqa: E402
from callgraph.hooks.layers import Convention, select_layers  # noqa: E402


def test_eagle3_ids_for_61_layers_match_specforge_and_sglang():
    sel = select_layers("eagle3", None, 61)
    assert sel.output_ids == (1, 29, 57)          # SpecForge: [1, N//2-1, N-4]
    assert sel.input_ids == (2, 30, 58)           # SGLang:    [2, N//2,   N-3]
    text = sel.describe()
    assert "[1,29,57]" in text and "[2,30,58]" in text


@pytest.mark.parametrize("spec,conv,out", [
    ("1,29,57", "output", (1, 29, 57)),
    ("2,30,58", "input", (1, 29, 57)),
    ("57,1,29", "output", (1, 29, 57)),
])
def test_both_conventions_name_the_same_layers(spec, conv, out):
    sel = select_layers(spec, conv, 61)
    assert sel.output_ids == out
    assert sel.convention is Convention(conv)


def test_ids_without_a_convention_are_refused():
    with pytest.raises(CallgraphError, match="needs --convention"):
        select_layers("1,2,3", None, 61)


@pytest.mark.parametrize("spec,conv,msg", [
    ("0,61", "output", "out of range"),
    ("0,5", "input", "embedding output"),
    ("61", "input", "out of range"),
    ("a,b", "output", "comma-separated"),
    ("3,3", "output", "twice"),
])
def test_bad_ids_name_the_range(spec, conv, msg):
    with pytest.raises(CallgraphError, match=msg):
        select_layers(spec, conv, 61)


def test_eagle3_needs_enough_layers():
    with pytest.raises(CallgraphError, match="at least 6"):
        select_layers("eagle3", None, 4)
