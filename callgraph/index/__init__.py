"""The index: what each parsed file defines and binds, read off its AST (docs/architecture.md)."""
