"""The companion hook module: act on a static proof inside a live PyTorch model.

The only part of callgraph that imports torch (install with `pip install -e .[dump]`). It depends
on `callgraph.model` and `callgraph.errors` only, never on the static analysis.

    from callgraph.hooks import Capture
"""
from __future__ import annotations

from .capture import Capture, HooksNeverFired
from .formats.safetensors_shards import load_index, read_sample
from .layers import Convention, LayerSelection, select_layers
from .locate import Target, locate

__all__ = ["Capture", "HooksNeverFired", "Convention", "LayerSelection", "select_layers",
           "Target", "locate", "load_index", "read_sample"]
