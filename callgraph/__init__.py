"""callgraph: prove how data flows through PyTorch model wrapper hierarchies."""

__version__ = "0.1.1"
