"""Captured states equal an independent reference, on tiny random-init models, exactly in fp32."""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.errors import ProofError  # noqa: E402
from callgraph.hooks import HooksNeverFired, load_index, read_sample  # noqa: E402
from callgraph.hooks.adapters import AdapterError  # noqa: E402

ROWS = tiny.samples(5)


def check_against_reference(model, out_dir, out_ids, rows=ROWS):
    index = load_index(out_dir)
    assert sorted(index) == [r[0] for r in rows]
    refs = tiny.reference(model, rows)
    for sid, ids, mask in rows:
        got = read_sample(out_dir, sid, index)
        ref = refs[sid]
        assert index[sid]["length"] == len(ids)                      # padding trimmed
        assert got["input_ids"].tolist() == ids and got["loss_mask"].tolist() == mask
        want = torch.cat([ref[i + 1] for i in out_ids], dim=-1)      # output of L = hs[L + 1]
        assert torch.equal(got["aux_hidden_state"][0], want)
        assert torch.equal(got["hidden_state"][0], ref[-1])          # after the final norm


@pytest.mark.parametrize("spec,conv", [("1,3,5", "output"), ("2,4,6", "input")])
def test_llama_layers_equal_reference_for_each_convention(tmp_path, spec, conv):
    model = tiny.llama()
    cap = tiny.dump(model, ROWS, tmp_path, spec, conv)
    check_against_reference(model, tmp_path, (1, 3, 5))
    m = cap.manifest
    assert m["convention"] == conv and m["layers"]["as_given"] == [int(x) for x in spec.split(",")]
    assert m["output_layer_ids"] == [1, 3, 5] and m["layers"]["input_ids"] == [2, 4, 6]
    assert m["fired_paths"] == ["model.layers.1", "model.layers.3", "model.layers.5", "model.norm"]


def test_final_state_is_the_norm_of_the_last_layer(tmp_path):
    model = tiny.llama()
    seen = {}
    model.model.layers[-1].register_forward_hook(lambda m, a, o: seen.__setitem__("last", o))
    rows = ROWS[:1]
    tiny.dump(model, rows, tmp_path, "6", "output")
    got = read_sample(tmp_path, 0)
    assert torch.equal(got["hidden_state"][0], model.model.norm(seen["last"])[0])


def test_llava_wrapper_by_proof(tmp_path):
    model = tiny.llava()
    proof = tiny.proof("LlavaForConditionalGeneration", "LlamaModel", ("model", "language_model"))
    cap = tiny.dump(model, ROWS, tmp_path, "eagle3", None, proof=proof)
    check_against_reference(model, tmp_path, (1, 3, 4))
    m = cap.manifest
    assert m["fired_paths"][0] == "model.language_model.layers.1"
    assert m["proof"]["attribute_chain"] == ["model", "language_model"]
    assert m["proof"]["hash"].startswith("sha256:")


def test_sglang_style_pairs_capture_the_sum(tmp_path):
    model = tiny.PairForCausalLM()
    rows = ROWS

    def call(m, b):   # SGLang packs a batch's tokens end to end, no padding
        m(torch.cat([b.input_ids[i, :n] for i, n in enumerate(b.lengths)]))

    streams = {}
    seen = []
    model.register_forward_hook(lambda m, a, o: seen.append([s for s in m.model.streams]))
    cap = tiny.dump(model, rows, tmp_path, "2,4,6", "input", call=call)
    offsets = {}
    for start in range(0, len(rows), 3):   # the batches dump made, packed end to end
        chunk, off = rows[start:start + 3], 0
        for sid, ids, _ in chunk:
            offsets[sid] = (start // 3, off, len(ids))
            off += len(ids)
    for sid, (bi, off, n) in offsets.items():
        streams[sid] = [s[off:off + n] for s in seen[bi]]
    assert set(cap.manifest["adapters"].values()) == {"residual-pair", "norm-first"}
    for sid, ids, _ in rows:
        got = read_sample(tmp_path, sid)
        want = torch.cat([streams[sid][i] for i in (1, 3, 5)], -1)
        assert torch.equal(got["aux_hidden_state"][0], want)


def test_left_padding_by_attention_mask(tmp_path):
    from callgraph.hooks import Capture
    model = tiny.llama()
    rows = ROWS[:3]
    t = max(len(ids) for _, ids, _ in rows)
    ids = torch.zeros(3, t, dtype=torch.long)
    att = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for b, (_, r, m) in enumerate(rows):   # left padding, as generate() batches
        ids[b, t - len(r):] = torch.tensor(r)
        att[b, t - len(r):] = 1
        mask[b, t - len(r):] = torch.tensor(m)
    with torch.no_grad():
        hs = model(input_ids=ids, attention_mask=att, output_hidden_states=True).hidden_states
        with Capture(model, "1,3", "output", out_dir=tmp_path) as cap:
            with cap.batch([r[0] for r in rows], ids, mask, attention_mask=att):
                model(input_ids=ids, attention_mask=att)
    for b, (sid, r, m) in enumerate(rows):
        got = read_sample(tmp_path, sid)
        keep = att[b].bool()
        assert got["input_ids"].tolist() == r and got["loss_mask"].tolist() == m
        assert torch.equal(got["aux_hidden_state"][0], torch.cat([hs[2][b][keep], hs[4][b][keep]], -1))
        assert torch.equal(got["hidden_state"][0], hs[-1][b][keep])


def test_decode_forwards_are_skipped(tmp_path):
    model = tiny.llama()
    rows = ROWS[:2]

    def call(m, b):
        m(input_ids=b.input_ids, attention_mask=b.attention_mask)            # prefill
        m(input_ids=b.input_ids[:, :1], attention_mask=b.attention_mask[:, :1])  # "decode"

    cap = tiny.dump(model, rows, tmp_path, "1,3,5", "output", call=call)
    assert cap.manifest["skipped_forwards"] == 1
    check_against_reference(model, tmp_path, (1, 3, 5), rows)


def test_proof_live_mismatch_names_expected_and_found(tmp_path):
    model = tiny.llama()
    wrong = tiny.proof("LlamaForCausalLM", "DeepseekV2Model", ("model",))
    with pytest.raises(ProofError, match="expected DeepseekV2Model at 'model'.*found .*LlamaModel"):
        tiny.dump(model, ROWS, tmp_path, proof=wrong)
    chain = tiny.proof("LlamaForCausalLM", "LlamaModel", ("language_model", "model"))
    with pytest.raises(ProofError, match="no submodule 'language_model'"):
        tiny.dump(model, ROWS, tmp_path, proof=chain)
    entry = tiny.proof("KimiK25ForConditionalGeneration", "LlamaModel", ("model",))
    with pytest.raises(ProofError, match="KimiK25ForConditionalGeneration.*LlamaForCausalLM"):
        tiny.dump(model, ROWS, tmp_path, proof=entry)


def test_an_unproven_proof_is_refused(tmp_path):
    from dataclasses import replace
    from callgraph.model import Verdict
    unknown = replace(tiny.proof("LlamaForCausalLM", "LlamaModel", ("model",)), verdict=Verdict.UNKNOWN)
    with pytest.raises(ProofError, match="verdict is 'unknown'"):
        tiny.dump(tiny.llama(), ROWS, tmp_path, proof=unknown)


def test_hooks_never_fire_is_an_error(tmp_path):
    model = tiny.llava()
    proof = tiny.proof("LlavaForConditionalGeneration", "LlamaModel", ("model", "language_model"))
    # the live forward goes around the proven module (here: the caller runs another module)
    with pytest.raises(HooksNeverFired, match="static proof and the live model disagree"):
        tiny.dump(model, ROWS[:1], tmp_path, proof=proof, call=lambda m, b: m.model.vision_tower)


def test_a_layer_that_never_fires_is_named(tmp_path):
    model = tiny.llama()
    model.config.num_hidden_layers = 4           # HF runs layers[:num_hidden_layers]
    with pytest.raises(HooksNeverFired, match="model.layers.5"):
        tiny.dump(model, ROWS[:1], tmp_path, "1,5", "output")


def test_unknown_output_shape_names_module_and_shape(tmp_path):
    model = tiny.llama()
    model.model.layers[3].register_forward_hook(lambda m, a, o: (o[..., :8], None))
    with pytest.raises(AdapterError, match=r"model.layers.3.*Tensor\[3, \d+, 8\]"):
        tiny.dump(model, ROWS, tmp_path, "1,3", "output")


def test_refused_engine_layer(tmp_path):
    model = tiny.PairForCausalLM()
    cls = type("DeepseekV2DecoderLayer", (tiny.PairLayer,), {})
    cls.__module__ = "sglang.srt.models.deepseek_v2"
    model.model.layers[3].__class__ = cls
    with pytest.raises(AdapterError, match="set_eagle3_layers_to_capture"):
        tiny.dump(model, ROWS, tmp_path, "3", "output")
