"""`callgraph dump`: run a local transformers model over a JSONL file and dump hidden states.

Library code below raises `CallgraphError`s; `callgraph.cli.main` turns them into one line and
exit code 3. The command returns 0 when every sample is written.
"""
from __future__ import annotations

import inspect
import json
import sys
import time
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


@click.group("dump", invoke_without_command=True, subcommand_metavar="[verify OUT]")
@click.option("--model", "model_dir", type=click.Path(path_type=Path),
              help="A local transformers model directory (required).")
@click.option("--random-init", is_flag=True, help="Build the model from config.json, no weights.")
@click.option("--seed", default=0, show_default=True, help="Seed of --random-init's weights.")
@click.option("--data", type=click.Path(path_type=Path),
              help='JSONL: {"input_ids": [...], "loss_mask": [...]} or {"text": "..."} a line (required).')
@click.option("--layers", default="eagle3", show_default=True,
              help="'eagle3' (outputs of [1, N//2-1, N-4]) or ids such as 1,29,57.")
@click.option("--convention", type=click.Choice(["output", "input"]), default=None,
              help="What an id L means: the output of decoder layer L, or its input. Required with ids.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), default=FORMAT_NAMES[0],
              show_default=True, help="On-disk layout: the trainer that reads the dump (docs/hooks.md).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Output folder (required); a rerun into it resumes.")
@click.option("--batch-size", default=8, show_default=True, type=click.IntRange(1),
              help="Samples a batch (with --max-tokens: at most this many, if given).")
@click.option("--max-tokens", default=None, type=click.IntRange(1),
              help="Batch by a token budget instead: samples sorted by length, packed while "
                   "samples x longest <= N (no padding waste).")
@click.option("--pack", is_flag=True,
              help="With --max-tokens: put each batch's samples end to end in one row, each "
                   "attending only to itself (no padding computed); checked against samples "
                   "run alone before the run.")
@click.option("--max-len", default=2048, show_default=True, type=click.IntRange(1),
              help="Truncate samples to this many tokens.")
@click.option("--device", default=None, type=click.Choice(["cuda", "cpu"]),
              help="Default: cuda when available.")
@click.option("--tp", default=1, show_default=True, type=click.IntRange(1),
              help="Under torchrun: shard the model over groups of K ranks with transformers' "
                   "tensor-parallel plan (data parallel over the world size / K groups).")
@click.option("--dtype", default="bf16", show_default=True, type=click.Choice(["bf16", "fp16", "fp32"]),
              help="Dtype the model runs in; states are stored in it.")
@click.option("--proof", "proof_path", type=click.Path(path_type=Path),
              help="A proof from `callgraph reach --json`; its attribute_chain finds the target.")
@click.option("--target-class", default=None, help="Find the target by class name instead of a proof.")
@click.option("--adapter", default="auto", type=click.Choice(["auto", *ADAPTER_NAMES]), show_default=True,
              help="How to read the residual stream from a layer's output.")
@click.option("--on-nan", default="fail", type=click.Choice(ON_NAN), show_default=True,
              help="A sample with NaN/Inf: stop (fail), or leave it out and list it in the manifest (skip).")
@click.option("--shard-mb", default=1024, show_default=True, type=click.IntRange(1),
              help="Target shard size of the safetensors format.")
@click.option("--check", "check_count", default=0, show_default=True, type=click.IntRange(0),
              help="Afterwards, recompute N random samples on disk one at a time and compare "
                   "(exit 1 if any differs).")
@click.option("--dry-run", is_flag=True,
              help="Say how big the run is (samples, tokens, batches, bytes, disk time) and stop "
                   "before any model is loaded.")
@click.pass_context
def dump(ctx, model_dir, random_init, seed, data, layers, convention, fmt, out_dir, batch_size,
         max_tokens, pack, max_len, device, tp, dtype, proof_path, target_class, adapter, on_nan, shard_mb,
         check_count, dry_run) -> int:
    """Dump hidden states at the proven target of a live model, for EAGLE-3 drafter training.

    `callgraph dump verify OUT` checks a finished dump instead.
    """
    if ctx.invoked_subcommand is not None:
        return 0
    missing = [name for name, value in (("--model", model_dir), ("--data", data), ("--out", out_dir))
               if value is None]
    if missing:
        raise click.UsageError(f"missing option{'s' if len(missing) > 1 else ''} "
                               f"{', '.join(missing)}", ctx)
    if pack and not max_tokens:
        raise click.UsageError("--pack needs --max-tokens N (the tokens one packed row holds)", ctx)
    if tp > 1 and check_count:
        raise click.UsageError("--check recomputes samples one at a time in one process; with "
                               "--tp run `callgraph dump verify OUT --model ... --check N` after "
                               "the dump instead", ctx)
    if tp > 1 and random_init:
        raise click.UsageError("--tp shards the weights as transformers loads them: it needs real "
                               "weights, not --random-init", ctx)
    torch, tqdm = _needs_extra()

    from .capture import Capture
    from . import packing, parallel
    from .data import plan, rows, scan
    from .formats import get_format
    from .manifest import RESULT_KEYS, close_manifest, merge_results
    from .fingerprint import check_resume, record_digests, weights_fingerprint
    from .layers import select_layers
    from .load import DTYPES, load_model, load_tokenizer, num_layers, read_config, vocab_size

    # Everything a user can get wrong is checked before the model loads and before --out is
    # touched: the proof, the device, the folder, every line of the data, what --out holds.
    proof = read_proof(proof_path) if proof_path else None
    device = _device(torch, device)
    if out_dir.exists() and not out_dir.is_dir():
        raise CallgraphError(f"--out {out_dir}: a file is there, not a folder")
    config = read_config(model_dir)
    depth = num_layers(config)
    if depth:   # --layers against the config's depth; Capture checks it again on the live model
        select_layers(layers, convention, depth)
    tokenizer = []

    def tokenize(text):
        if not tokenizer:
            tokenizer.append(load_tokenizer(model_dir))
        return tokenizer[0](text)

    summary = scan(data, tokenize, max_len, vocab_size(config))
    explicit = ctx.get_parameter_source("batch_size") is not click.core.ParameterSource.DEFAULT
    batches_plan = plan(summary, batch_size if (explicit or not max_tokens) else None, max_tokens,
                        packed=pack)
    if dry_run:
        from .dryrun import describe
        for line in describe(summary, batches_plan, config, layers, convention, DTYPES[dtype],
                             out_dir, fmt, packed=pack):
            click.echo(line)
        return 0
    weights = weights_fingerprint(model_dir, random_init, seed)
    check_resume(out_dir, weights, summary.digests, data, _echo)
    ranks = parallel.from_env(tp)
    device = parallel.start(ranks, device)
    _echo(f"{data}: {summary.samples} samples, {summary.tokens} tokens after --max-len {max_len} "
          f"(longest {summary.longest}), {len(batches_plan)} batches"
          + (f"; rank {ranks.rank} of {ranks.world} takes {len(ranks.mine(batches_plan))}"
             + (f" (tensor-parallel group {ranks.dp_rank} of {ranks.dp_world}, "
                f"{'writes' if ranks.writes else 'confirms only'})" if tp > 1 else "")
             if ranks.distributed else "") + f"; loading the model from {model_dir}")
    model = load_model(model_dir, device, DTYPES[dtype], random_init, seed, config, tp=tp,
                       world=ranks.world)
    if tp > 1:
        parallel.check_group(ranks, model)
    extra = _forward_kwargs(model)
    own_attention = None
    if pack:
        packing.register()
        own_attention = packing.attention_of(model)
        packing.use(model, packing.NAME)

    options = {"shard_bytes": shard_mb << 20, "rank": ranks.rank,
               "write_index": not ranks.distributed} if fmt == "safetensors" else {}
    cap = Capture(model, layers, convention, out_dir=out_dir, format=fmt, proof=proof,
                  target_class=target_class, adapter=adapter, on_nan=on_nan,
                  model_name=str(model_dir), warn=_echo if ranks.primary else None,
                  format_options=options, provenance={"weights": weights, "data": str(data), **({"tensor_parallel": tp} if tp > 1 else {})},
                  primary=ranks.primary, finish=not ranks.distributed)
    if pack:   # before --out is touched: a model that cannot be packed is refused here
        cap.provenance["batching"] = _pack_self_test(model, cap, data, summary, tokenize, max_len,
                                                     extra, own_attention, dtype, max_tokens)
        if ranks.primary:
            _echo(f"--pack: {cap.provenance['batching']['self_test']}")
    state = {"entered": False, "written": 0}

    def enter():
        cap.__enter__()
        state["entered"] = True
        if ranks.primary:
            record_digests(out_dir, data, summary.digests)

    def run():
        t = cap.target
        if ranks.primary:
            _echo(f"target {type(t.module).__name__} at '{t.path or '<model>'}' (found by "
                  f"{t.found_by}), {len(t.layers)} layers at '{t.layers_path}', final norm "
                  f"'{t.norm_path}', hidden size {t.hidden_size}")
            _echo(cap.selection.describe())
        done = cap.done_ids
        mine = [b for b in ranks.mine(batches_plan) if not set(b) <= done]
        todo = [i for b in mine for i in b if i not in done]
        state["todo"] = len(todo)
        if done and ranks.primary:
            _echo(f"resuming: {len(done)} samples already in {out_dir}, "
                  f"{summary.samples - len(done)} to do")
        bar = tqdm(total=sum(summary.lengths[i] for i in todo), unit="tok", unit_scale=True,
                   desc="dump", file=sys.stderr, dynamic_ncols=True, disable=not ranks.primary)
        state["t0"] = time.perf_counter()
        # DTensor's collectives fail on inference tensors ("do not track version counter")
        with bar, (torch.no_grad() if tp > 1 else torch.inference_mode()):
            for ids in mine:
                # a batch of the plan is run whole, even where some of it is on disk already,
                # so that every sample is computed in the same company as in a one-pass run
                keep = [i for i in ids if i not in done]
                write = keep if len(keep) < len(ids) else None
                if not ranks.writes:   # its group's first rank writes the replicated states
                    write = []
                batch = packing.prepare(rows(data, summary, ids, tokenize, max_len), pack, device)
                with cap.batch(*batch.capture, write=write), batch.running():
                    model(**batch.inputs, **extra)
                state["written"] += len(keep)
                bar.update(sum(summary.lengths[i] for i in keep))
                bar.set_postfix_str(f"{state['written']}/{len(todo)} samples, "
                                    f"{cap.stats.bytes / 1e9:.2f} GB written")

    def leave():
        state["entered"] = False
        cap.__exit__(None, None, None)
        state["seconds"] = time.perf_counter() - state["t0"]   # until the last byte is written

    try:   # rank 0 cleans --out and writes the manifest before the other ranks read it
        parallel.phase(ranks, enter if ranks.primary else lambda: None)
        parallel.phase(ranks, lambda: None if ranks.primary else enter())
        parallel.phase(ranks, run)
        parallel.phase(ranks, leave)
    except BaseException as exc:
        if state["entered"]:
            cap.__exit__(type(exc), exc, exc.__traceback__)
        parallel.stop(ranks)
        raise
    manifest = cap.manifest
    if ranks.distributed:   # every rank's results, then rank 0 completes the index and manifest
        mine = {k: manifest[k] for k in RESULT_KEYS}
        if not ranks.writes:   # it confirmed the path (fired) but wrote nothing
            mine.update(samples_written=0, tokens_written=0, bytes_written=0, nan_skipped=[])
        results = parallel.gather(ranks, mine)
        if ranks.primary:
            fmt_all = get_format(fmt)(out_dir)
            fmt_all.close()
            manifest = dict(manifest, **merge_results(results, len(fmt_all.done_ids())))
            close_manifest(out_dir, manifest)
        parallel.stop(ranks)
        if not ranks.primary:
            return 0
    rate = manifest["tokens_written"] / state["seconds"] if state["seconds"] else 0
    if not state.get("todo") and not ranks.distributed:
        _echo(f"nothing left to do: all {manifest['samples_on_disk']} samples are already in "
              f"{out_dir} ({fmt}); fired when they were made: "
              f"{', '.join(manifest.get('fired_paths', [])) or 'not recorded'}")
    else:
        _echo(f"wrote {manifest['samples_written']} samples, {manifest['tokens_written']} tokens, "
              f"{manifest['bytes_written'] / 1e9:.3f} GB to {out_dir} ({fmt})"
              + (f" from {ranks.world} ranks" if ranks.distributed else "")
              + f" in {state['seconds']:.1f} s ({rate:,.0f} tokens/s)"
              + f"; fired: {', '.join(manifest.get('fired_paths', []))}")
    if manifest["nan_skipped"]:
        _echo(f"skipped {len(manifest['nan_skipped'])} samples with NaN/Inf: "
              f"{manifest['nan_skipped'][:20]}")
    if check_count:
        if own_attention is not None:   # the check runs samples alone, with the model's own
            packing.use(model, own_attention)
        _check(model, out_dir, check_count, data, tokenize, max_len, extra)
    return 0


def _pack_self_test(model, cap, data, summary, tokenize, max_len, extra, own_attention, dtype,
                    max_tokens) -> dict:
    """Run the shortest samples (up to 4, within the budget) packed and each alone with the
    model's own attention, and compare the captured layers' rows: a model whose results packing
    would change is refused before anything is written."""
    from . import adapters, packing
    from .check import TOLERANCE
    from .load import DTYPES
    from .data import rows

    shortest = sorted(summary.lengths, key=lambda i: (summary.lengths[i], i))[:4]
    while len(shortest) > 1 and sum(summary.lengths[i] for i in shortest) > max_tokens:
        shortest.pop()
    t = cap.target
    paths = [t.layer_path(i) for i in cap.selection.output_ids] + [t.norm_path]
    tolerance = TOLERANCE[str(DTYPES[dtype]).removeprefix("torch.")]   # as the manifest names it
    worst = packing.self_test(model, rows(data, summary, shortest, tokenize, max_len), paths,
                              own_attention, extra, tolerance,
                              adapters.reader(t.hidden_size, t.norm_path, cap.adapter_name))
    return {"packed": True, "max_tokens": max_tokens, "model_attention": own_attention,
            "self_test": f"{len(shortest)} samples packed vs alone ({own_attention}): worst row "
                         f"error {worst:.2e}, tolerance {tolerance:g}"}


def _needs_extra():
    try:
        import safetensors  # noqa: F401
        import torch
        import transformers  # noqa: F401
        from tqdm import tqdm
    except ImportError as exc:
        raise CallgraphError(f"callgraph dump needs the dump extra ({exc.name or exc}): "
                             f"pip install -e '.[dump]' in a checkout of callgraph") from None
    return torch, tqdm


def _device(torch, device: str | None) -> str:
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise CallgraphError("--device cuda: this torch build sees no CUDA device; use --device cpu")
    return device


def _forward_kwargs(model) -> dict:
    takes = inspect.signature(model.forward).parameters
    extra = {"use_cache": False} if "use_cache" in takes else {}
    if "logits_to_keep" in takes:
        extra["logits_to_keep"] = 1   # the dump needs no logits; [B, T, vocab] would be GBs
    return extra


@dump.command("verify")
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.option("--data", type=click.Path(path_type=Path),
              help="The data file dumped: every sample of it must be on disk once, and no other.")
@click.option("--model", "model_dir", type=click.Path(path_type=Path),
              help="The model directory dumped, for --check.")
@click.option("--check", "check_count", default=0, show_default=True, type=click.IntRange(0),
              help="Recompute N random samples with --model, one at a time, and compare.")
@click.option("--random-init", is_flag=True, help="--model was dumped with --random-init.")
@click.option("--seed", default=0, show_default=True, help="Seed of --random-init's weights.")
@click.option("--device", default=None, type=click.Choice(["cuda", "cpu"]),
              help="Where --check runs the model. Default: cuda when available.")
def verify(out_dir, data, model_dir, check_count, random_init, seed, device) -> int:
    """Check a dump: every sample readable, shapes and dtypes as the manifest says, no NaN/Inf,
    the index complete; with --data, every sample there once; with --model --check N, N samples
    recomputed. Prints one line a problem; exits 1 when there is any, 0 when clean."""
    torch, tqdm = _needs_extra()
    from .load import load_model
    from .verify import data_ids, read_manifest, verify_dump

    if check_count and model_dir is None:
        raise click.UsageError("--check needs --model (the model the dump was made from)")
    manifest = read_manifest(out_dir)
    expected = data_ids(data) if data is not None else None
    with tqdm(unit="sample", desc="verify", file=sys.stderr, dynamic_ncols=True) as bar:
        problems = verify_dump(out_dir, expected, progress=bar.update)
    checked = ""
    if check_count:
        from .check import check_dump
        dtype = getattr(torch, manifest["dtype"])
        model = load_model(model_dir, _device(torch, device), dtype, random_init, seed)
        with torch.inference_mode():
            report = check_dump(model, out_dir, check_count, forward_kwargs=_forward_kwargs(model))
        problems += report.problems
        checked = f"; {report.summary()}"
    for problem in problems:
        click.echo(f"{out_dir}: {problem}")
    verdict = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}" if problems else "clean"
    _echo(f"verify: {out_dir}: {verdict} ({manifest['format']}, {manifest.get('samples_on_disk', '?')} "
          f"samples in the manifest){checked}")
    return 1 if problems else 0


def _check(model, out_dir, count, data, tokenize, max_len, forward_kwargs) -> None:
    from .check import DumpCheckFailed, check_dump
    from .data import read_samples

    def tokens(pick):
        wanted = set(pick)
        return {i: ids for i, ids, _ in read_samples(data, tokenize, max_len) if i in wanted}

    report = check_dump(model, out_dir, count, tokens=tokens, forward_kwargs=forward_kwargs)
    for problem in report.problems[:20]:
        _echo(f"check: {problem}")
    if report.problems:
        raise DumpCheckFailed(f"{out_dir}: {report.summary()}")
    _echo(f"check: {report.summary()}")
