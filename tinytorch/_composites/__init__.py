"""Ops composed from tensor ops rather than written as kernels, one module per concern; the op schema
(``codegen/ops.py``) exports them as functions and methods through ``tinytorch._generated``."""
