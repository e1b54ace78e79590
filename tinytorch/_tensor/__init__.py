"""The tensor layer, above the kernel families (``tinytorch._ops``): the Tensor class (``tensor``),
creation, the random generator, printing, numpy/DLPack/pickle interop, ``__torch_function__``,
autocast's op wrapper and the legacy tensor types."""
