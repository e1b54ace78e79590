"""PyTorch names still written by hand beside the op schema: in-place and method forms, Tensor
attributes, top-level queries and the ``torch.<nn.functional name>`` aliases. The package root
installs them; each is to become a schema row (``codegen/ops.py``) pointing at its implementation."""
