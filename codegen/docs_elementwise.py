"""Docstrings of the generated elementwise functions, by name: codegen/generate.py writes each into
tinytorch/_ops/elementwise_unary.pxi / elementwise_binary.pxi (a row's ``doc`` wins). A row without an
entry gets the generator's default: its summary and the Args of ``input`` (and ``other``). In-place
variants (``add_``) read "In-place version of add." with their function's Args less ``input``."""

DOCS = {
    "add": """Computes add of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to add to :attr:`input`.

    Keyword args:
        alpha (Number): the multiplier for :attr:`other`. Default: ``1``""",
    "sub": """Computes sub of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to subtract from :attr:`input`.

    Keyword args:
        alpha (Number): the multiplier for :attr:`other`. Default: ``1``""",
    "mul": """Computes mul of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to multiply input by.""",
    "floor_divide": """Computes floor_divide of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the dividend.
        other (Tensor or Number): the divisor.""",
    "remainder": """Computes remainder of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the dividend.
        other (Tensor or Number): the divisor.""",
    "eq": """Computes eq of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
    "ne": """Computes ne of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
    "lt": """Computes lt of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
    "le": """Computes le of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
    "gt": """Computes gt of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
    "ge": """Computes ge of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the tensor to compare.
        other (Tensor or float): the tensor or value to compare.""",
}
