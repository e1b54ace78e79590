"""``tinytorch.linalg``, as ``torch.linalg``: norms (``_norms``), factorizations and solvers on
LAPACK/cuSOLVER with their derivatives (``_decompositions``), and the functions composed of them
(``_composites``). float32/float64; see docs/linalg.md for what exists and what doesn't."""
from tinytorch.linalg._composites import (cross, diagonal, lstsq, matmul, matrix_exp, matrix_power, matrix_rank,
                                          multi_dot, pinv, vecdot)
from tinytorch.linalg._decompositions import (LinAlgError, cholesky, cholesky_ex, det, eig, eigh, eigvals, eigvalsh,
                                              inv, inv_ex, lu_factor, lu_factor_ex, lu_solve, qr, slogdet, solve,
                                              solve_ex, solve_triangular, svd, svdvals)
from tinytorch.linalg._lu import lu, lu_unpack  # noqa: F401
from tinytorch.linalg._norms import matrix_norm, norm, vector_norm
from tinytorch.linalg._tensor_equations import tensorinv, tensorsolve, vander

__all__ = ["vector_norm", "matrix_norm", "norm", "LinAlgError", "solve", "solve_ex", "inv", "inv_ex", "det",
           "slogdet", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals", "solve_triangular",
           "lu_factor", "lu_factor_ex", "lu_solve", "eig", "eigvals", "lstsq", "pinv", "matrix_rank", "matrix_power",
           "cross", "multi_dot", "vecdot", "matmul", "diagonal", "lu"]
__all__ += ["vander", "tensorinv", "tensorsolve"]
__all__ += ["matrix_exp"]
