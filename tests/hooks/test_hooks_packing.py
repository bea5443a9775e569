"""`--pack`: a batch's samples end to end in one row, each attending only to itself.

Exactness as in test_hooks_exact.py: every sample of a packed dump equals that sample's own
one-sample forward with the model's own attention (plain hooks, fp32, 1e-5), read back without
callgraph's readers. And what would make packing silently wrong is refused before anything is
written: a sliding window, an attention outside transformers' interface, a model whose positions
do not restart per sample.
"""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402
from test_hooks_exact import LAYERS, ROWS, assert_exact, reference  # noqa: E402

from callgraph.cli import main  # noqa: E402
from callgraph.hooks import adapters, packing  # noqa: E402
from callgraph.hooks.data import DataSummary, plan  # noqa: E402


def _summary(lengths):
    return DataSummary(samples=len(lengths), lengths=dict(enumerate(lengths)))


def test_packed_plan_fills_rows_without_padding_and_covers_every_sample_once():
    lengths = [30, 2, 17, 9, 30, 5, 12, 28, 3, 3, 40]
    batches = plan(_summary(lengths), None, 32, packed=True)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    for b in batches:   # within the budget, except a sample longer than it, alone
        assert sum(lengths[i] for i in b) <= 32 or len(b) == 1
    assert [10] in batches   # 40 tokens > 32: its own batch
    # longest first, and the room left is filled by the shortest: 30 + 2, 30 + 3 (not 30 alone)
    assert sorted(sum(lengths[i] for i in b) for b in batches)[-3:] == [32, 32, 40]
    assert plan(_summary(lengths), None, 32, packed=True) == batches   # a function of the data
    capped = plan(_summary(lengths), 2, 64, packed=True)
    assert max(len(b) for b in capped) == 2


def _cli(tmp_path, model_dir, data, out, *extra):
    argv = ["dump", "--model", str(model_dir), "--data", str(data), "--layers", "1,3,5",
            "--convention", "output", "--out", str(out), "--device", "cpu", "--dtype", "fp32",
            "--max-tokens", "64", "--pack", *extra]
    return main(argv)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    from transformers import AutoModelForCausalLM
    root = tmp_path_factory.mktemp("packed")
    model_dir = root / "model"
    tiny.llama().save_pretrained(model_dir)
    data = tiny.write_jsonl(root / "data.jsonl", ROWS)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    return model_dir, data, reference(model, ROWS, "cpu")


@pytest.mark.parametrize("fmt", ["safetensors", "specforge", "speculators", "modelopt"])
def test_packed_cli_dump_is_exact(tmp_path, capsys, saved, fmt):
    model_dir, data, refs = saved
    out = tmp_path / fmt
    code = _cli(tmp_path, model_dir, data, out, "--format", fmt, "--check", "4")
    err = capsys.readouterr().err
    assert code == 0, err
    assert "--pack: 4 samples packed vs alone (sdpa)" in err, err
    assert_exact(out, fmt, ROWS, refs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["batching"]["packed"] is True and manifest["batching"]["model_attention"] == "sdpa"


def test_packed_resume_after_part_is_exact(tmp_path, capsys, saved):
    """A resumed packed run recomputes the part-done batch whole and writes only what is missing."""
    model_dir, data, refs = saved
    out = tmp_path / "resumed"
    first = tiny.write_jsonl(tmp_path / "first.jsonl", ROWS[:20])
    assert _cli(tmp_path, model_dir, first, out) == 0, capsys.readouterr().err
    assert _cli(tmp_path, model_dir, data, out) == 0, capsys.readouterr().err
    assert_exact(out, "safetensors", ROWS, refs)


def test_pack_needs_max_tokens(tmp_path, capsys, saved):
    model_dir, data, _ = saved
    code = main(["dump", "--model", str(model_dir), "--data", str(data), "--out",
                 str(tmp_path / "o"), "--pack", "--device", "cpu"])
    assert code == 3 and "--pack needs --max-tokens" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_sliding_window_model_is_refused_before_anything_is_written(tmp_path, capsys):
    from transformers import MistralConfig, MistralForCausalLM
    torch.manual_seed(0)
    cfg = MistralConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=8,
                        num_attention_heads=2, num_key_value_heads=1, sliding_window=4,
                        max_position_embeddings=64)
    model_dir = tmp_path / "mistral"
    MistralForCausalLM(cfg).save_pretrained(model_dir)
    data = tiny.write_jsonl(tmp_path / "d.jsonl", ROWS[:8])
    code = _cli(tmp_path, model_dir, data, tmp_path / "out")
    err = capsys.readouterr().err
    assert code == 3 and "--pack:" in err and "dump without --pack" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def _forward(model, rows):
    row = packing.pack(rows)
    with packing.segments(row.lengths, "cpu"):
        return model(input_ids=row.input_ids, position_ids=row.position_ids,
                     output_hidden_states=True).hidden_states[-1][0]


def test_positions_taken_from_the_row_are_caught_by_the_self_test():
    """A model that adds an absolute position of the row (not of the sample) to its embeddings,
    as learned absolute position embeddings fed by the row's index would: packed states differ
    from the states alone, though every attention call was ours, and the self-test refuses it.
    (Rotary embeddings would not: q.k depends on relative positions only.)"""
    model = tiny.llama()
    packing.register()
    packing.use(model, packing.NAME)
    paths = [f"model.layers.{i}" for i in LAYERS] + ["model.norm"]

    def row_positions(module, args, output):
        return output + 0.05 * torch.arange(output.shape[1], dtype=output.dtype)[None, :, None]

    read = adapters.reader(model.config.hidden_size, "model.norm")
    handle = model.model.embed_tokens.register_forward_hook(row_positions)
    with pytest.raises(packing.PackingUnsupported, match="differ from the same samples run alone"):
        packing.self_test(model, ROWS[:4], paths, "sdpa", {}, 1e-4, read)
    handle.remove()
    assert packing.self_test(model, ROWS[:4], paths, "sdpa", {}, 1e-4, read) < 1e-4


def test_attention_outside_the_interface_is_refused():
    model = tiny.llama()
    packing.register()   # the model keeps its own attention: ours is never called
    row = packing.pack(ROWS[:3])
    with pytest.raises(packing.PackingUnsupported, match="never called"):
        with packing.segments(row.lengths, "cpu"):
            model(input_ids=row.input_ids, position_ids=row.position_ids)


def test_samples_in_a_row_do_not_see_each_other():
    """The packed attention itself: a sample's states do not change with its neighbours."""
    model = tiny.llama()
    packing.register()
    packing.use(model, packing.NAME)
    with torch.no_grad():
        a = _forward(model, ROWS[:3])
        b = _forward(model, [ROWS[5], ROWS[1], ROWS[7]])
    n0, n1 = len(ROWS[0][1]), len(ROWS[1][1])
    n5 = len(ROWS[5][1])
    assert torch.allclose(a[n0:n0 + n1], b[n5:n5 + n1], atol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("gqa", [False, True])
def test_cuda_varlen_kernel_matches_one_sdpa_per_sample(monkeypatch, gqa):
    """On CUDA in bf16 the packed attention runs FlashAttention's varlen kernel; it must give
    what one causal SDPA per sample gives."""
    if packing._varlen() is None:
        pytest.skip("this torch has no torch.nn.attention.varlen")
    g = torch.Generator(device="cuda").manual_seed(0)
    lengths, hq, hkv, d = [5, 17, 300, 3, 1024], 8, 2 if gqa else 8, 128
    t = sum(lengths)
    q = torch.randn(1, hq, t, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (torch.randn(1, hkv, t, d, device="cuda", dtype=torch.bfloat16, generator=g)
            for _ in range(2))
    module = torch.nn.Module()
    with packing.segments(lengths, "cuda"):
        fast, _ = packing.packed_attention(module, q, k, v, None, scaling=d ** -0.5)
    monkeypatch.setattr(packing, "_varlen", lambda: None)   # one SDPA a sample instead
    with packing.segments(lengths, "cuda"):
        slow, _ = packing.packed_attention(module, q, k, v, None, scaling=d ** -0.5)
    assert fast.shape == slow.shape == (1, t, hq, d)
    assert (fast.float() - slow.float()).abs().max().item() < 2e-2
