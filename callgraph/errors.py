"""One exception family for every user-facing failure.

Library code raises these; only `cli.py` turns them into a one-line message and an exit code.
Messages name the file (and line where there is one) so the user can act without a traceback.
"""
from __future__ import annotations


class CallgraphError(Exception):
    """Base of every error a user can cause (bad input, bad config, missing tool)."""

    exit_code = 3


class RootError(CallgraphError):
    """A --root / --package that does not exist or holds no Python source."""


class NameNotFound(CallgraphError):
    """A query name that matches no function, method or class in the roots."""


class AmbiguousName(CallgraphError):
    """A query name that matches several definitions; the message lists them with files."""


class BindingError(CallgraphError):
    """A malformed --bind FACTORY=CLASS."""


class ConfigError(CallgraphError):
    """An invalid configuration: names the file, section and key."""


class RenderError(CallgraphError):
    """A picture that cannot be written (e.g. Graphviz missing)."""


class ProofError(CallgraphError):
    """A proof JSON that cannot be read or does not fit the live model."""


class ModelConfigError(CallgraphError):
    """A --model-config that cannot be read, or names what the tree's registries do not know."""
