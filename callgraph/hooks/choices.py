"""Names the `dump` command offers, kept free of torch so `--help` and the torch check need none."""

FORMAT_NAMES = ("safetensors", "specforge")          # the first is the default
ADAPTER_NAMES = ("tensor", "residual-pair", "first-of-tuple")
ON_NAN = ("fail", "skip")
