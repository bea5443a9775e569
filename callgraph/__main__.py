"""`python -m callgraph ...`: the same command line as the `callgraph` console script."""
from .launch import entry

if __name__ == "__main__":  # pragma: no cover - run as a process by tests/test_cli_help.py
    entry()
