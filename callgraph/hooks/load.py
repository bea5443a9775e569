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


def load_model(model_dir: Path, device: str, dtype: torch.dtype, random_init: bool,
               seed: int = 0) -> torch.nn.Module:
    from transformers import AutoConfig

    model_dir = Path(model_dir)
    if not (model_dir / "config.json").exists():
        raise ModelLoadError(f"{model_dir}: no config.json (expected a local transformers model directory)")
    config = AutoConfig.from_pretrained(model_dir)
    last = None
    for auto in _auto_classes():
        try:
            if random_init:   # seeded: a rerun (resume) must see the same random model
                torch.manual_seed(seed)
                with torch.device(device):
                    model = auto.from_config(config, dtype=dtype)
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
