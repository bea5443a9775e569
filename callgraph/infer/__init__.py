"""The resolver: expressions evaluated to abstract values, calls dispatched on them."""
