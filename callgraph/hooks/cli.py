"""`callgraph dump`: run a local transformers model over a JSONL file and dump hidden states.

Library code below raises `CallgraphError`s; `callgraph.cli.main` turns them into one line and
exit code 3. The command returns 0 when every sample is written.
"""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import click

from ..errors import CallgraphError, ProofError
from ..model import Proof
from .choices import ADAPTER_NAMES, FORMAT_NAMES, ON_NAN


def _echo(msg: str) -> None:
    click.echo(f"callgraph dump: {msg}", err=True)


def read_proof(path: Path) -> Proof:
    try:
        return Proof.from_json(json.loads(Path(path).read_text()))
    except OSError as exc:
        raise ProofError(f"{path}: cannot read the proof ({exc.strerror})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ProofError(f"{path}: not a proof JSON from `callgraph reach --json` ({exc})") from None


@click.command("dump")
@click.option("--model", "model_dir", required=True, type=click.Path(path_type=Path),
              help="A local transformers model directory.")
@click.option("--random-init", is_flag=True, help="Build the model from config.json, no weights.")
@click.option("--seed", default=0, show_default=True, help="Seed of --random-init's weights.")
@click.option("--data", required=True, type=click.Path(path_type=Path),
              help='JSONL: {"input_ids": [...], "loss_mask": [...]} or {"text": "..."} a line.')
@click.option("--layers", default="eagle3", show_default=True,
              help="'eagle3' (outputs of [1, N//2-1, N-4]) or ids such as 1,29,57.")
@click.option("--convention", type=click.Choice(["output", "input"]), default=None,
              help="What an id L means: the output of decoder layer L, or its input. Required with ids.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=FORMAT_NAMES[0],
              show_default=True)
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
@click.option("--batch-size", default=8, show_default=True, type=click.IntRange(1))
@click.option("--max-len", default=2048, show_default=True, type=click.IntRange(1))
@click.option("--device", default=None, type=click.Choice(["cuda", "cpu"]),
              help="Default: cuda when available.")
@click.option("--dtype", default="bf16", show_default=True, type=click.Choice(["bf16", "fp16", "fp32"]))
@click.option("--proof", "proof_path", type=click.Path(path_type=Path),
              help="A proof from `callgraph reach --json`; its attribute_chain finds the target.")
@click.option("--target-class", default=None, help="Find the target by class name instead of a proof.")
@click.option("--adapter", default="auto", type=click.Choice(["auto", *ADAPTER_NAMES]), show_default=True,
              help="How to read the residual stream from a layer's output.")
@click.option("--on-nan", default="fail", type=click.Choice(ON_NAN), show_default=True)
@click.option("--shard-mb", default=1024, show_default=True, type=click.IntRange(1),
              help="Target shard size of the safetensors format.")
def dump(model_dir, random_init, seed, data, layers, convention, fmt, out_dir, batch_size, max_len,
         device, dtype, proof_path, target_class, adapter, on_nan, shard_mb) -> int:
    """Dump hidden states at the proven target of a live model, for EAGLE-3 drafter training."""
    try:
        import safetensors  # noqa: F401
        import torch
        import transformers  # noqa: F401
        from tqdm import tqdm
    except ImportError as exc:
        raise CallgraphError(f"callgraph dump needs the dump extra ({exc.name or exc}): "
                             f"pip install 'callgraph[dump]'") from None

    from .capture import Capture
    from .data import batches, read_samples
    from .load import DTYPES, load_model, load_tokenizer

    proof = read_proof(proof_path) if proof_path else None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise CallgraphError("--device cuda: this torch build sees no CUDA device; use --device cpu")
    model = load_model(model_dir, device, DTYPES[dtype], random_init, seed)
    takes = inspect.signature(model.forward).parameters
    extra = {"use_cache": False} if "use_cache" in takes else {}
    if "logits_to_keep" in takes:
        extra["logits_to_keep"] = 1   # the dump needs no logits; [B, T, vocab] would be GBs

    tokenizer = []

    def tokenize(text):
        if not tokenizer:
            tokenizer.append(load_tokenizer(model_dir))
        return tokenizer[0](text)

    options = {"shard_bytes": shard_mb << 20} if fmt == "safetensors" else {}
    with Capture(model, layers, convention, out_dir=out_dir, format=fmt, proof=proof,
                 target_class=target_class, adapter=adapter, on_nan=on_nan,
                 model_name=str(model_dir), warn=_echo, format_options=options) as cap:
        t = cap.target
        _echo(f"target {type(t.module).__name__} at '{t.path or '<model>'}' (found by {t.found_by}), "
              f"{len(t.layers)} layers at '{t.layers_path}', final norm '{t.norm_path}', "
              f"hidden size {t.hidden_size}")
        _echo(cap.selection.describe())
        done = cap.done_ids
        if done:
            _echo(f"resuming: {len(done)} samples already in {out_dir}")
        bar = tqdm(unit="tok", unit_scale=True, desc="dump", file=sys.stderr, dynamic_ncols=True)
        with bar, torch.inference_mode():
            for b in batches(read_samples(data, tokenize, max_len, done), batch_size):
                with cap.batch(b.ids, b.input_ids, b.loss_mask, b.lengths):
                    model(input_ids=b.input_ids.to(device, non_blocking=True),
                          attention_mask=b.attention_mask.to(device, non_blocking=True), **extra)
                bar.update(b.tokens)
                bar.set_postfix_str(f"{cap.stats.bytes / 1e9:.2f} GB written")
    stats = cap.stats
    _echo(f"wrote {stats.samples} samples, {stats.tokens} tokens, {stats.bytes / 1e9:.3f} GB to "
          f"{out_dir} ({fmt}); fired: {', '.join(cap.manifest.get('fired_paths', []))}")
    if stats.nan_skipped:
        _echo(f"skipped {len(stats.nan_skipped)} samples with NaN/Inf: {stats.nan_skipped[:20]}")
    return 0
