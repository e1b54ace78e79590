"""Op families: each module holds the forward functions and their backward formulas; the op
schema (codegen/ops.py) exports them as tinytorch.<op> and as Tensor methods."""
