"""The CI gate (`callgraph check`): contracts over call paths, checked before a patch is applied.

config (read and validate) -> contracts (evaluate on shared analyses) -> baseline (drift) ->
report / junit (render). Only `callgraph.commands.check` prints or exits.
"""
