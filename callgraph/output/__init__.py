"""Output formats of query results, apart from the analysis (text here; JSON is the model's)."""
