"""The core layer, below every op: dtypes and devices, ``Size``, the thread count, loading the CUDA
backend, the Cython tensor base (``tensor_base``), the autograd graph and grad mode (``graph``) and
the backward engine (``engine``). Nothing here knows the Tensor class or any op."""
