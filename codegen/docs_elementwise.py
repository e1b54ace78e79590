"""Docstrings of the generated elementwise functions, by name: codegen/generate.py writes each into
tinytorch/_ops/elementwise_unary.pxi / elementwise_binary.pxi (a row's ``doc`` wins). A row without an
entry gets the generator's default: its summary and the Args of ``input`` (and ``other``). In-place
variants (``add_``) read "In-place version of add." with their function's Args less ``input``."""

# the rows that share one docstring but for the name (and, with alpha, what other does)
_WITH_ALPHA = """Computes {name} of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to {other} :attr:`input`.

    Keyword args:
        alpha (Number): the multiplier for :attr:`other`. Default: ``1``"""
_DIVISION = """Computes {name} of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the dividend.
        other (Tensor or Number): the divisor."""
_COMPARISON = """Computes {name} of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare."""

DOCS = {
    "add": _WITH_ALPHA.format(name="add", other="add to"),
    "sub": _WITH_ALPHA.format(name="sub", other="subtract from"),
    "mul": """Computes mul of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to multiply input by.""",
    **{name: _DIVISION.format(name=name) for name in ("floor_divide", "remainder")},
    **{name: _COMPARISON.format(name=name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
}
