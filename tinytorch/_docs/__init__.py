"""Docstring tables: PyTorch's one-line summaries and an Args entry per parameter name, applied to
the package's functions and Tensor methods when the root imports (``docstrings.document_api``)."""
