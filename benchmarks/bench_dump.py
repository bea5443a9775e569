"""Prefill throughput with and without hidden-state capture, and the disk it writes to.

A random-init Llama (default: 8B-shaped, hidden 4096, 32 layers, bf16) runs prefill batches of
8 x 2048 tokens. Modes:
  plain         no hooks;
  naive-cpu     forward hooks that call `.cpu()` on 3 aux layers + the final norm (the common recipe);
  ours-null     callgraph.hooks.Capture with a format that discards (the transfer cost alone);
  ours-<fmt>    Capture writing to local disk in each format (safetensors, specforge).
The disk's own sequential write bandwidth (fsync'd) is measured in the same run, since a dump of
~0.5 GB per batch can be disk-bound: then the target is >= 90% of that bandwidth.

    python3 benchmarks/bench_dump.py                      # on a GPU, the full size
    python3 benchmarks/bench_dump.py --tiny --device cpu  # seconds on a CPU, to check it runs
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callgraph.hooks import Capture  # noqa: E402
from callgraph.hooks.check import check_dump  # noqa: E402
from callgraph.hooks.formats import Format  # noqa: E402


class NullFormat(Format):
    """Counts bytes and drops them: measures capture + transfer without the disk."""

    name = "null"

    def done_ids(self):
        return set()

    def write(self, samples):
        return sum(s.state_bytes() for s in samples)


def build(args):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=args.hidden, num_hidden_layers=args.layers,
                      intermediate_size=args.intermediate, num_attention_heads=args.heads,
                      num_key_value_heads=args.kv_heads, vocab_size=args.vocab,
                      max_position_embeddings=max(4096, args.seqlen), tie_word_embeddings=False)
    cfg._attn_implementation = "sdpa"
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    torch.manual_seed(0)
    with torch.device(args.device):
        model = LlamaForCausalLM._from_config(cfg, dtype=dtype)
    return model.eval()


def sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def disk_bandwidth(folder: Path, total: int, chunk: int = 64 << 20) -> float:
    """Sequential write with fsync, bytes/s (what a dump of large files sees)."""
    folder.mkdir(parents=True, exist_ok=True)
    buf = os.urandom(chunk)
    path = folder / "disk-probe.bin"
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        written = 0
        while written < total:
            written += os.write(fd, buf)
        os.fsync(fd)
    finally:
        os.close(fd)
    dt = time.perf_counter() - t0
    path.unlink()
    return written / dt


def open_capture(model, args, fmt: str, out: Path):
    shutil.rmtree(out, ignore_errors=True)
    return Capture(model, "eagle3", out_dir=out, format=NullFormat(out) if fmt == "null" else fmt,
                   host_slots=args.host_slots).__enter__()


def close_capture(cap) -> float:
    """Seconds until the last byte is written."""
    if cap is None:
        return 0.0
    t1 = time.perf_counter()
    cap.__exit__(None, None, None)
    return time.perf_counter() - t1


def check_and_remove(model, args, out: Path, kw) -> dict:
    """A fast wrong dump must never be reported: recompute samples one at a time, compare."""
    report = check_dump(model, out, args.check, forward_kwargs=kw)
    shutil.rmtree(out, ignore_errors=True)
    return {"samples": len(report.checked), "worst": report.worst,
            "tolerance": report.tolerance, "problems": report.problems}


def run_mode(model, args, mode, batches, out_root: Path):
    device, sid = args.device, [0]
    aux = (1, args.layers // 2 - 1, args.layers - 4)
    handles, sink = [], []
    kw = {"use_cache": False, "logits_to_keep": 1}

    def naive(m, a, o):
        sink.append((o[0] if isinstance(o, tuple) else o).cpu())

    if mode == "naive-cpu":
        for i in aux:
            handles.append(model.model.layers[i].register_forward_hook(naive))
        handles.append(model.model.norm.register_forward_hook(naive))

    cap = None
    if mode.startswith("ours-"):
        cap = open_capture(model, args, mode[len("ours-"):], out_root / mode[len("ours-"):])

    def step(ids_dev, ids_cpu):
        if cap is None:
            model(input_ids=ids_dev, **kw)
            sink.clear()
            return
        ids = list(range(sid[0], sid[0] + ids_cpu.shape[0]))
        sid[0] += ids_cpu.shape[0]
        with cap.batch(ids, ids_cpu, torch.ones_like(ids_cpu)):
            model(input_ids=ids_dev, **kw)

    with torch.inference_mode():
        for ids_dev, ids_cpu in batches[:args.warmup]:
            step(ids_dev, ids_cpu)
        sync(device)
        if cap is not None:
            cap.drain()   # the warm-up's writes must not spill into the timed region
        written0 = cap.stats.bytes if cap else 0
        t0 = time.perf_counter()
        for ids_dev, ids_cpu in batches[args.warmup:]:
            step(ids_dev, ids_cpu)
        sync(device)
        loop = time.perf_counter() - t0
        drain = close_capture(cap)
    for h in handles:
        h.remove()
    tokens = sum(b[1].numel() for b in batches[args.warmup:])
    written = (cap.stats.bytes - written0) if cap else 0
    checked = None
    if cap is not None and mode != "ours-null":
        checked = check_and_remove(model, args, out_root / mode[len("ours-"):], kw)
    return {"mode": mode, "tokens": tokens, "loop_s": loop, "drain_s": drain,
            "tok_s": tokens / loop, "tok_s_e2e": tokens / (loop + drain),
            "bytes": written, "gb_s": written / (loop + drain) / 1e9, "check": checked}


def run_mixed(model, args, mode, samples, out_root: Path):
    """The command's loop on mixed-length samples: the plan's token-budget batches (`--max-tokens`
    = batch x seqlen), padded on the CPU per batch, moved, run, captured; real tokens counted."""
    from callgraph.hooks import packing
    from callgraph.hooks.data import DataSummary, plan
    summary = DataSummary(lengths={i: len(ids) for i, ids in samples})
    parts = mode.split("-")       # mixed[-fixed|-packed]-plain | mixed[-fixed|-packed]-ours-FORMAT
    # "fixed": --batch-size batches in line order, right-padded (what the command did before
    # --max-tokens); "packed": --max-tokens --pack (one row a batch, varlen attention); else the
    # token-budget plan, right-padded
    packed = "packed" in parts
    batches = (plan(summary, args.batch, None) if "fixed" in parts
               else plan(summary, None, args.batch * args.seqlen, packed=packed))
    kw = {"use_cache": False, "logits_to_keep": 1}
    fmt = parts[-1] if "ours" in parts else None
    cap = open_capture(model, args, fmt, out_root / ("mixed-" + fmt)) if fmt else None
    by_id = dict(samples)
    own = packing.attention_of(model)
    if packed:
        packing.register()
        packing.use(model, packing.NAME)

    def call(ids):
        batch = packing.prepare([(i, by_id[i], [1] * len(by_id[i])) for i in ids], packed, args.device)
        with (cap.batch(*batch.capture) if cap is not None else contextlib.nullcontext()), batch.running():
            model(**batch.inputs, **kw)

    try:
        with torch.inference_mode():
            if packed:   # the warm-up runs the kernels the loop runs
                with packing.segments([args.seqlen] * args.batch, args.device):
                    model(input_ids=torch.zeros(1, args.batch * args.seqlen, dtype=torch.long,
                                                device=args.device),
                          position_ids=torch.arange(args.seqlen, device=args.device).repeat(
                              args.batch)[None], **kw)
            else:
                model(input_ids=torch.zeros(args.batch, args.seqlen, dtype=torch.long,
                                            device=args.device), **kw)
            sync(args.device)
            t0 = time.perf_counter()
            for ids in batches:
                call(ids)
            sync(args.device)
            loop = time.perf_counter() - t0
            drain = close_capture(cap)
    finally:
        if packed:
            packing.use(model, own)
    tokens = sum(summary.lengths.values())
    padded = sum(sum(summary.lengths[i] for i in b) if packed
                 else len(b) * max(summary.lengths[i] for i in b) for b in batches)
    checked = None
    if fmt and fmt != "null":
        checked = check_and_remove(model, args, out_root / ("mixed-" + fmt), kw)
    written = cap.stats.bytes if cap else 0
    return {"mode": mode, "tokens": tokens, "padded_tokens": padded, "batches": len(batches),
            "loop_s": loop, "drain_s": drain, "tok_s": tokens / loop,
            "tok_s_e2e": tokens / (loop + drain), "bytes": written,
            "gb_s": written / (loop + drain) / 1e9, "check": checked}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiny", action="store_true", help="a toy size, to check the script on a CPU")
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--intermediate", type=int, default=14336)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seqlen", type=int, default=2048)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--host-slots", type=int, default=3)
    p.add_argument("--disk-gb", type=float, default=4.0)
    p.add_argument("--out", default="/tmp/callgraph-bench")
    p.add_argument("--modes", default="plain,naive-cpu,ours-null,ours-safetensors,ours-specforge,plain")
    p.add_argument("--mixed", type=int, default=256,
                   help="samples of 512-2048 tokens (scaled to --seqlen) for the mixed-length modes")
    p.add_argument("--mixed-modes", default="mixed-fixed-ours-safetensors,mixed-plain,"
                   "mixed-ours-safetensors,mixed-packed-plain,mixed-packed-ours-safetensors,"
                   "mixed-packed-ours-specforge")
    p.add_argument("--check", type=int, default=8,
                   help="samples of each written dump recomputed alone and compared")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    if args.tiny:
        args.hidden, args.layers, args.intermediate, args.heads, args.kv_heads = 64, 8, 128, 4, 2
        args.vocab, args.batch, args.seqlen, args.iters, args.warmup = 256, 2, 64, 4, 1
        args.disk_gb, args.mixed = 0.05, 16

    out_root = Path(args.out)
    disk = disk_bandwidth(out_root, int(args.disk_gb * 1e9))
    model = build(args)
    g = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(args.warmup + args.iters):
        cpu = torch.randint(0, args.vocab, (args.batch, args.seqlen), generator=g)
        batches.append((cpu.to(args.device), cpu))
    results = [run_mode(model, args, m, batches, out_root) for m in args.modes.split(",")]
    lo, hi = args.seqlen // 4, args.seqlen
    mixed = [(i, torch.randint(0, args.vocab, (int(torch.randint(lo, hi + 1, (1,), generator=g)),),
                               generator=g).tolist()) for i in range(args.mixed)]
    if args.mixed:
        results += [run_mixed(model, args, m, mixed, out_root) for m in args.mixed_modes.split(",")]
    plains = [r["tok_s"] for r in results if r["mode"] == "plain"]
    base = max(plains) if plains else None

    per_batch = args.batch * args.seqlen * 4 * args.hidden * (2 if args.dtype == "bf16" else 4)
    print(f"\nmodel: Llama hidden {args.hidden}, {args.layers} layers, {args.dtype}, on {args.device}"
          + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else "")
          + f"; batches {args.batch}x{args.seqlen}, {args.iters} timed after {args.warmup} warm-up")
    print(f"disk: {disk / 1e9:.2f} GB/s sequential write with fsync ({args.disk_gb:g} GB probe)"
          f"; a batch's capture is {per_batch / 1e9:.3f} GB")
    bytes_tok = per_batch / (args.batch * args.seqlen)
    ceiling = disk / bytes_tok
    if base:
        bound = "the disk" if ceiling < base else "the GPU"
        print(f"disk-bound ceiling for a dump: {ceiling:,.0f} tokens/s "
              f"({ceiling / base:.2f}x plain): the limit here is {bound}")
    print("\n| mode | tokens/s (loop) | x plain | tokens/s (incl. final drain) | x plain | GB/s written "
          "| x disk | data checked |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = f"{r['tok_s'] / base:.3f}" if base else "-"
        ratio_e = f"{r['tok_s_e2e'] / base:.3f}" if base else "-"
        gbs = f"{r['gb_s']:.2f}" if r["bytes"] else "-"
        xd = f"{r['gb_s'] * 1e9 / disk:.2f}" if r["bytes"] and r["mode"] != "ours-null" else "-"
        c = r["check"]
        ok = "-" if c is None else (
            f"{c['samples']} samples, worst row error {c['worst']:.1e}"
            + (f": **WRONG** ({len(c['problems'])})" if c["problems"] else ""))
        print(f"| {r['mode']} | {r['tok_s']:,.0f} | {ratio} | {r['tok_s_e2e']:,.0f} | {ratio_e} | {gbs} "
              f"| {xd} | {ok} |")
    wrong = [r["mode"] for r in results if r["check"] and r["check"]["problems"]]
    for r in results:
        for problem in (r["check"] or {}).get("problems", [])[:5]:
            print(f"{r['mode']}: {problem}", file=sys.stderr)
    if args.mixed:
        first = next(r for r in results if r["mode"].startswith("mixed-") and "fixed" not in r["mode"])
        print(f"\nmixed lengths: {args.mixed} samples of {lo}-{hi} tokens, {first['tokens']:,} real "
              f"tokens in {first['batches']} token-budget batches (--max-tokens "
              f"{args.batch * args.seqlen}), {first['padded_tokens']:,} computed with padding; "
              f"x plain is against the full-batch plain rate above, in real tokens")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "disk_bytes_s": disk,
                                               "results": results}, indent=2))
    if wrong:
        print(f"wrong data written by {', '.join(wrong)}: these figures are not results",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
