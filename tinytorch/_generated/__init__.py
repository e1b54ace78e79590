"""What ``codegen/generate.py`` writes from the op schema, nothing by hand: ``functional`` (every op
function, exported as ``tinytorch.<name>``) and ``methods`` (every op method of ``Tensor``)."""
