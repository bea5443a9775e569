"""The companion hook module: act on a static proof inside a live PyTorch model.

The only part of callgraph that imports torch (install with `pip install -e .[dump]`). It depends
on `callgraph.model` and `callgraph.errors` only, never on the static analysis. Names are loaded
on first use, so importing the package (as `callgraph --help` does to list `dump`) needs no torch.

    from callgraph.hooks import Capture
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "Capture": ".capture", "HooksNeverFired": ".capture",
    "load_index": ".formats.safetensors_shards", "read_sample": ".formats.safetensors_shards",
    "Convention": ".layers", "LayerSelection": ".layers", "select_layers": ".layers",
    "Target": ".locate", "locate": ".locate",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'callgraph.hooks' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
