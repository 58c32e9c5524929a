"""NP-Bench: build datasets with certified references, export them, evaluate completions."""
