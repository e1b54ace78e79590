"""Op families: each module holds the forward functions, their backward formulas, and a
METHODS table that tinytorch/tensor.py installs on tinytorch.Tensor."""
