"""Build a live transformers model from a local directory (weights, or --random-init from config).

Random init builds the model directly on the target device in the target dtype (an 8B model is
16 GB in bf16: building it on the CPU first would cost minutes and host memory for nothing).
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..errors import CallgraphError

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


class ModelLoadError(CallgraphError):
    """A --model directory that transformers cannot build a model from."""


def _auto_classes():
    import transformers
    names = ("AutoModelForCausalLM", "AutoModelForImageTextToText", "AutoModel")
    return [getattr(transformers, n) for n in names if hasattr(transformers, n)]


def read_config(model_dir: Path):
    """The directory's transformers config (cheap: no weights are read)."""
    from transformers import AutoConfig

    model_dir = Path(model_dir)
    if not (model_dir / "config.json").exists():
        raise ModelLoadError(f"{model_dir}: no config.json (expected a local transformers model directory)")
    try:
        return AutoConfig.from_pretrained(model_dir)
    except (ValueError, OSError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"{model_dir}/config.json: transformers cannot read it ({exc})") from None


def config_int(config, name: str) -> int | None:
    """An int setting of the config, or of its text model's config for a multimodal one."""
    for cfg in (config, getattr(config, "get_text_config", lambda: None)()):
        n = getattr(cfg, name, None) if cfg is not None else None
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
    return None


def vocab_size(config) -> int | None:
    """The number of token ids the model embeds."""
    return config_int(config, "vocab_size")


def num_layers(config) -> int | None:
    """The decoder's depth as the config states it."""
    return config_int(config, "num_hidden_layers")


def _tensor_parallel(tp: int, world: int) -> dict:
    """from_pretrained's arguments for `tp`-way tensor parallelism in `world // tp` replicas."""
    try:
        from transformers.distributed import DistributedConfig
        cfg = DistributedConfig(tp_plan="auto", tp_size=tp, dp_replicate_size=world // tp,
                                fsdp_size=1)
    except (ImportError, TypeError) as exc:
        import transformers
        raise ModelLoadError(f"--tp needs transformers' DistributedConfig with tp_size and "
                             f"dp_replicate_size (transformers {transformers.__version__}: {exc})"
                             ) from None
    return {"distributed_config": cfg}


def load_model(model_dir: Path, device: str, dtype: torch.dtype, random_init: bool,
               seed: int = 0, config=None, tp: int = 1, world: int = 1) -> torch.nn.Module:
    """`tp` > 1 (under torchrun, the process group joined): shard the weights with
    transformers' own tensor-parallel plan over groups of `tp` consecutive ranks."""
    import transformers

    model_dir = Path(model_dir)
    config = config if config is not None else read_config(model_dir)
    transformers.utils.logging.disable_progress_bar()   # ours is the one progress bar shown
    if tp > 1 and random_init:
        raise ModelLoadError("--tp loads the weights sharded by transformers' from_pretrained; "
                             "it does not build --random-init models")
    last = None
    for auto in _auto_classes():
        try:
            if random_init:   # seeded: a rerun (resume) must see the same random model
                torch.manual_seed(seed)
                with torch.device(device):
                    model = auto.from_config(config, dtype=dtype)
            elif tp > 1:
                model = auto.from_pretrained(model_dir, dtype=dtype, **_tensor_parallel(tp, world))
            else:
                model = auto.from_pretrained(model_dir, dtype=dtype).to(device)
            return model.eval()
        except ValueError as exc:  # this auto class does not know the config
            last = exc
    raise ModelLoadError(f"{model_dir}: no transformers auto class builds {type(config).__name__} ({last})")


def load_tokenizer(model_dir: Path):
    from transformers import AutoTokenizer
    try:
        tok = AutoTokenizer.from_pretrained(Path(model_dir))
    except Exception as exc:  # transformers raises many kinds here
        raise ModelLoadError(f"{model_dir}: cannot load its tokenizer ({exc})") from None
    return lambda text: tok(text, add_special_tokens=True)["input_ids"]
