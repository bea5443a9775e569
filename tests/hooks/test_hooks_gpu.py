"""On a CUDA device: exact capture through the side stream, and no host sync from the hooks."""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("safetensors")

import hooks_tiny as tiny  # noqa: E402

from callgraph.hooks import load_index, read_sample  # noqa: E402
from callgraph.hooks.transfer import HostPool, Mover  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
ROWS = tiny.samples(7, lo=3, hi=40)


def _cuda_llama(dtype):
    return tiny.llama().to("cuda", dtype)


def _on_cuda(model):
    def call(m, b):
        m(input_ids=b.input_ids.cuda(), attention_mask=b.attention_mask.cuda())
    return call


def _reference(model, rows, batch_size=3):
    from callgraph.hooks.data import batches
    out = {}
    with torch.no_grad():
        for b in batches(rows, batch_size):
            hs = model(input_ids=b.input_ids.cuda(), attention_mask=b.attention_mask.cuda(),
                       output_hidden_states=True).hidden_states
            for i, (sid, n) in enumerate(zip(b.ids, b.lengths)):
                out[sid] = [h[i, :n].cpu() for h in hs]
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("fmt", ["safetensors", "specforge"])
def test_cuda_capture_equals_reference(tmp_path, dtype, fmt):
    model = _cuda_llama(dtype)
    cap = tiny.dump(model, ROWS, tmp_path, "1,3,5", "output", call=_on_cuda(model), format=fmt,
                    host_slots=2)
    refs = _reference(model, ROWS)
    for sid, ids, _ in ROWS:
        if fmt == "safetensors":
            got = read_sample(tmp_path, sid, load_index(tmp_path))
        else:
            got = torch.load(tmp_path / f"rows_0-2000/data_{sid}.ckpt", weights_only=True)
        want = torch.cat([refs[sid][i + 1] for i in (1, 3, 5)], -1)
        assert got["aux_hidden_state"].dtype == dtype
        assert torch.equal(got["aux_hidden_state"][0], want)
        assert torch.equal(got["hidden_state"][0], refs[sid][-1])
    assert cap.manifest["dtype"] == str(dtype).replace("torch.", "")


def test_mover_never_syncs_the_host():
    h, k, n = 16, 3, 4
    pool = HostPool(2, pin=True)
    mover = Mover(torch.device("cuda"), pool)
    x = torch.randn(2, n, h, device="cuda")
    # warm up: pinned and staging buffers are allocated once, outside the checked region
    st = mover.begin([n, n], n, k, h, torch.float32)
    pool.release(mover.finish(st))
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        st = mover.begin([n, n], n, k, h, torch.float32)
        for i in range(k):
            mover.put_layer(st, i, x + i)
        mover.put_final(st, x * 2)
        slot = mover.finish(st)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    slot.done.synchronize()
    assert torch.equal(slot.aux[:2 * n].view(2 * n, k, h)[:, 2], (x + 2).reshape(-1, h).cpu())
    assert not slot.bad[:2 * n].any()


def test_cli_on_cuda_formats_agree_and_resume(tmp_path, capsys):
    from callgraph.cli import main
    from transformers import LlamaConfig
    model_dir = tmp_path / "m"
    LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=8,
                num_attention_heads=4, num_key_value_heads=2,
                max_position_embeddings=512).save_pretrained(model_dir)
    rows = tiny.samples(20, lo=5, hi=300)
    data = tiny.write_jsonl(tmp_path / "d.jsonl", rows)
    common = ["dump", "--model", str(model_dir), "--random-init", "--data", str(data),
              "--device", "cuda", "--batch-size", "4"]
    assert main(common + ["--format", "specforge", "--out", str(tmp_path / "sf")]) == 0
    assert main(common + ["--out", str(tmp_path / "st"), "--shard-mb", "1"]) == 0
    index = load_index(tmp_path / "st")
    for sid, ids, _ in rows:
        a = torch.load(tmp_path / f"sf/rows_0-2000/data_{sid}.ckpt", weights_only=True)
        b = read_sample(tmp_path / "st", sid, index)
        assert a["input_ids"].tolist() == ids
        for key in ("hidden_state", "aux_hidden_state"):
            assert a[key].dtype == torch.bfloat16 and torch.equal(a[key], b[key])
    for f in sorted((tmp_path / "sf").glob("rows_*/*.ckpt"))[::2]:
        f.unlink()
    capsys.readouterr()
    assert main(common + ["--format", "specforge", "--out", str(tmp_path / "sf")]) == 0
    err = capsys.readouterr().err
    assert "resuming: 10 samples" in err and "wrote 10 samples" in err
    again = torch.load(tmp_path / "sf/rows_0-2000/data_0.ckpt", weights_only=True)
    assert torch.equal(again["aux_hidden_state"], read_sample(tmp_path / "st", 0, index)["aux_hidden_state"])
