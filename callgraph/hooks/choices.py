"""Names the `dump` command offers, kept free of torch so `--help` and the torch check need none."""

# the first is the default; "vllm" names the same layout as "speculators" (formats/speculators.py)
FORMAT_NAMES = ("safetensors", "specforge", "speculators", "vllm", "modelopt")
ADAPTER_NAMES = ("tensor", "residual-pair", "first-of-tuple")
ON_NAN = ("fail", "skip")
