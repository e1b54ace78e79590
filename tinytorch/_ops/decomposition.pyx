# cython: language_level=3
"""Matrix factorizations and solvers (LAPACK on the CPU, cuSOLVER on CUDA through _C) with their
derivatives beside them, as PyTorch's FunctionsManual: solve, inv, det/slogdet, cholesky, qr,
eigh, svd and solve_triangular. The formulas are written with differentiable ops (matmul,
solve_triangular, solve, inv), so double backward works. Each forward also returns LAPACK's info
per matrix; ``check_info`` turns a nonzero one into PyTorch's LinAlgError message."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, make_node, set_history, save_tensors, is_grad_enabled_c
from tinytorch._core.dtype import FLOAT16, BFLOAT16, FLOAT32, FLOAT64, is_floating_code
from tinytorch._ops.shape import cat


class LinAlgError(RuntimeError):
    """A factorization or solve failed on its input (singular, not positive-definite, no
    convergence), as ``torch.linalg.LinAlgError``; a RuntimeError."""


_TORCH_DTYPE = {0: "Bool", 1: "Byte", 2: "Int", 3: "Long", 4: "Half", 5: "BFloat16", 6: "Float", 7: "Double"}


def check_input(str name, Tensor A, bint square=True, str kernel=None):
    """PyTorch's argument checks: at least 2-D, floating (16-bit floats unsupported), square."""
    impl = A._impl
    if impl.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    code = impl.dtype_code
    if not is_floating_code(code):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_TORCH_DTYPE[code]}")
    if code == FLOAT16 or code == BFLOAT16:
        if kernel is not None:      # the ops whose kernel PyTorch reaches before checking the dtype
            raise NotImplementedError(f'"{kernel}_{impl.device.type}" not implemented for \'{_TORCH_DTYPE[code]}\'')
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_TORCH_DTYPE[code]}")
    if square and impl.shape[-1] != impl.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{impl.shape[-2]} by {impl.shape[-1]} matrices")


_INFO_MESSAGES = {
    "cholesky": "The factorization could not be completed because the input is not positive-definite "
                "(the leading minor of order {info} is not positive-definite).",
    "solve": "The solver failed because the input matrix is singular.",
    "inv": "The diagonal element {info} is zero, the inversion could not be completed because the input "
           "matrix is singular.",
    "eigh": "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            "repeated eigenvalues (error code: {info}).",
    "svd": "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
           "repeated singular values (error code: {info}).",
}


def check_info(str name, str kind, info, bint batched):
    """Raises LinAlgError for the first matrix whose LAPACK info is nonzero (info: int32 tensor)."""
    flat = info.reshape(-1).tolist()
    for i, v in enumerate(flat):
        if v > 0:
            where = f"(Batch element {i}): " if batched else ""
            raise LinAlgError(f"{name}: {where}" + _INFO_MESSAGES[kind].format(info=v))
        if v < 0:
            raise RuntimeError(f"{name}: Argument {-v} has illegal value. Most certainly there is a bug in the "
                               f"implementation calling the backend library.")


cdef tuple _record_many(str name, object backward, tuple inputs, tuple impls, tuple differentiable,
                        dict attrs, tuple saved_inputs, tuple saved_outputs):
    """Wraps a multi-output op's results; when grad is needed, one node whose differentiable
    outputs carry its history. saved_outputs are output positions to save (after history, so the
    node keeps only their storage)."""
    outs = tuple(None if impl is None else wrap(impl) for impl in impls)
    cdef Node n = make_node(name, backward, inputs, len(outs))
    if n is not None:
        for k, v in attrs.items():
            setattr(n, k, v)
        for i, o in enumerate(outs):
            if differentiable[i] and o is not None:
                set_history(<Tensor>o, n, i)
        save_tensors(n, saved_inputs + tuple(outs[i] for i in saved_outputs))
    return outs


def _eye(Tensor like, int n):
    return wrap(_C.eye(n, n, like._impl.dtype_code, like._impl.device))


def _diag_embed(v):
    n = v.shape[-1]
    return v.unsqueeze(-1) * _eye(v, n)


# ------------------------------------------------------------------ solve_triangular
def _solve_triangular_back(Node n, g):
    A, X = n.saved_tensors
    gA = gB = None
    # left: X = A^-1 B -> gB = A^-T g, gA = -gB X^T; right: X = B A^-1 -> gB = g A^-T, gA = -X^T gB
    gB = solve_triangular(A.mT, g, upper=not n.upper, left=n.left, unitriangular=n.unitriangular)
    if n.needs_input_grad[0]:
        gA = -(gB @ X.mT) if n.left else -(X.mT @ gB)
        gA = gA.triu(1 if n.unitriangular else 0) if n.upper else gA.tril(-1 if n.unitriangular else 0)
    return (gA, gB if n.needs_input_grad[1] else None)


def solve_triangular(Tensor A, Tensor B, *, bint upper, bint left=True, bint unitriangular=False):
    check_input("linalg.solve_triangular", A, kernel="triangular_solve")
    X = _C.solve_triangular(A._impl, B._impl, upper, left, unitriangular)
    return _record_many("LinalgSolveTriangularBackward0", _solve_triangular_back, (A, B), (X,), (True,),
                        {"upper": upper, "left": left, "unitriangular": unitriangular}, (A,), (0,))[0]


# ------------------------------------------------------------------ solve / inv
def _solve_back(Node n, g, ginfo):
    A, X = n.saved_tensors
    if g is None:
        return (None, None)
    if is_grad_enabled_c():         # create_graph: a differentiable solve
        gB = solve_ex(A.mT, g)[0]
    else:                           # reuse the forward's LU factors: A^T gB = g
        gB = wrap(_C.lu_solve(n.lu, n.pivots, g._impl, True))
    gA = -(gB @ X.mT) if n.needs_input_grad[0] else None
    return (gA, gB if n.needs_input_grad[1] else None)


def solve_ex(Tensor A, Tensor B):
    """(X, info) with A X = B for A (..., n, n), B (..., n, k); batch dims broadcast."""
    check_input("linalg.solve", A, kernel="lu")
    if B._impl.dtype_code != A._impl.dtype_code:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_TORCH_DTYPE[A._impl.dtype_code]} and B of type {_TORCH_DTYPE[B._impl.dtype_code]} instead")
    n = A._impl.shape[-1]
    if B._impl.ndim < 2 or B._impl.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A._impl.shape[-2]}x{n} and {'x'.join(map(str, B._impl.shape[-2:]))})")
    lu, piv, info = _C.lu_factor_ex(A._impl)
    X = _C.lu_solve(lu, piv, B._impl, False)
    return _record_many("LinalgSolveExBackward0", _solve_back, (A, B), (X, info), (True, False),
                        {"lu": lu, "pivots": piv}, (A,), (0,))


def _inv_back(Node n, g, ginfo):
    (Ainv,) = n.saved_tensors
    if g is None:
        return (None,)
    return (-(Ainv.mT @ g @ Ainv.mT),)


def inv_ex(Tensor A):
    """(A^-1, info) for A (..., n, n): LU factors, then solves against the identity."""
    check_input("linalg.inv", A)
    lu, piv, info = _C.lu_factor_ex(A._impl)
    Ainv = _C.lu_solve(lu, piv, _C.eye(A._impl.shape[-1], None, A._impl.dtype_code, A._impl.device), False)
    return _record_many("LinalgInvExBackward0", _inv_back, (A,), (Ainv, info), (True, False), {}, (), (0,))


# ------------------------------------------------------------------ det / slogdet
cdef tuple _lu_det_parts(Tensor A):
    """From P A = L U: (sign of the permutation times the signs of U's diagonal, log|det|, info)."""
    lu, piv, info = _C.lu_factor_ex(A._impl)
    n = A._impl.shape[-1]
    diag = wrap(lu).diagonal(0, -2, -1)
    steps = wrap(_C.arange(1, n + 1, 1, piv.dtype_code, piv.device))
    swaps = (wrap(piv) != steps).sum(-1)
    perm_sign = 1.0 - 2.0 * (swaps % 2).to(wrap(lu).dtype)
    sign = perm_sign * diag.sign().prod(-1)
    logabs = diag.abs().log().sum(-1)
    return sign, logabs, info


def _det_back(Node n, g):
    A, det = n.saved_tensors
    if n.singular:
        # adj(A)^T = det(U) det(V^T) U diag(prod_{j != i} s_j) V^T, defined for singular A too
        U, s, Vh = svd(A, full_matrices=False)
        k = s.shape[-1]
        others = s.unsqueeze(-2).expand(*s.shape[:-1], k, k)
        eye = _eye(s, k)
        gamma = (others * (1 - eye) + eye).prod(-1)
        su = _lu_det_parts(U.detach())[0] * _lu_det_parts(Vh.detach())[0]
        cof = (U * (gamma * su).unsqueeze(-2)) @ Vh
        return ((g.unsqueeze(-1).unsqueeze(-1)) * cof,)
    return ((g * det).unsqueeze(-1).unsqueeze(-1) * inv_ex(A)[0].mT,)


def det(Tensor A):
    check_input("linalg.det", A, kernel="lu")
    sign, logabs, info = _lu_det_parts(A)
    d = sign * logabs.exp()
    # a singular A (an exactly zero pivot) takes the SVD formula in backward, as PyTorch
    singular = bool((wrap(info) > 0).any().item()) if A.requires_grad else False
    return _record_many("LinalgDetBackward0", _det_back, (A,), (d._impl,), (True,), {"singular": singular},
                        (A,), (0,))[0]


def _slogdet_back(Node n, gsign, glogabs):
    (A,) = n.saved_tensors
    if glogabs is None:
        return (None,)
    return (glogabs.unsqueeze(-1).unsqueeze(-1) * inv_ex(A)[0].mT,)


def slogdet(Tensor A):
    """(sign, log|det A|); only log|det| is differentiable."""
    check_input("linalg.slogdet", A)
    sign, logabs, info = _lu_det_parts(A)
    return _record_many("LinalgSlogdetBackward0", _slogdet_back, (A,), (sign._impl, logabs._impl), (False, True),
                        {}, (A,), ())


# ------------------------------------------------------------------ cholesky
def _cholesky_back(Node n, gL, ginfo):
    (L,) = n.saved_tensors
    if gL is None:
        return (None,)
    if n.upper:
        L, gL = L.mT, gL.mT
    # gA = L^-H pi*(tril(L^H gL)) L^-1, pi*(X) = (X + X^H - diag X) / 2
    gA = (L.mT @ gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = solve_triangular(L.mT, gA, upper=True, left=True)
    return (solve_triangular(L, gA, upper=False, left=False),)


def cholesky_ex(Tensor A, bint upper=False):
    check_input("linalg.cholesky", A, kernel="cholesky")
    L, info = _C.cholesky_ex(A._impl, upper)
    return _record_many("LinalgCholeskyExBackward0", _cholesky_back, (A,), (L, info), (True, False),
                        {"upper": upper}, (), (0,))


# ------------------------------------------------------------------ qr
def _qr_square_tall_back(Q, R, gQ, gR):
    # A = QR, m >= n: gA = (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q, copyltu(M) = tril(M) + tril(M, -1)^H
    # (Seeger et al., arXiv:1710.08717)
    M = R @ gR.mT - gQ.mT @ Q
    M = M.tril() + M.tril(-1).mT
    return solve_triangular(R.mT, gQ + Q @ M, upper=False, left=False)


def _qr_back(Node n, gQ, gR):
    Q, R = n.saved_tensors
    m, k = Q.shape[-2], Q.shape[-1]
    ncols = R.shape[-1]
    if n.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if n.mode == "complete" and m > ncols:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    gQ = gQ if gQ is not None else Q * 0.0
    gR = gR if gR is not None else R * 0.0
    if m >= ncols:
        return (_qr_square_tall_back(Q, R, gQ, gR),)
    # wide: A = Q [R1 R2], X = A[:, :m] = Q R1, Y = A[:, m:] = Q R2
    Y = n.saved_input.narrow(-1, m, ncols - m)
    gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, ncols - m)
    gX = _qr_square_tall_back(Q, R.narrow(-1, 0, m), gQ + Y @ gR2.mT, gR1)
    return (cat([gX, Q @ gR2], -1),)


def qr(Tensor A, str mode="reduced"):
    check_input("linalg.qr", A, square=False, kernel="geqrf")
    Q, R = _C.qr(A._impl, mode)
    wide = A._impl.shape[-2] < A._impl.shape[-1]
    return _record_many("LinalgQrBackward0", _qr_back, (A,), (Q, R), (mode != "r", True),
                        {"mode": mode, "saved_input": A.detach() if wide else None}, (), (0, 1))


# ------------------------------------------------------------------ eigh
def _eigh_back(Node n, gL, gV):
    L, V = n.saved_tensors
    # gA = V (skew(V^H gV) / E + diag(gL)) V^H, E_ij = L_j - L_i (off the diagonal); repeated
    # eigenvalues make E zero there, as in PyTorch (the derivative is not defined)
    inner = None
    if gV is not None:
        VhgV = V.mT @ gV
        VhgV = 0.5 * (VhgV - VhgV.mT)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        eye = _eye(L, L.shape[-1])
        inner = VhgV / (E + eye)
    if gL is not None:
        inner = _diag_embed(gL) if inner is None else inner + _diag_embed(gL)
    if inner is None:
        return (None,)
    return (V @ inner @ V.mT,)


def eigh(Tensor A, str UPLO="L"):
    check_input("linalg.eigh", A, kernel="linalg_eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V, info = _C.eigh(A._impl, UPLO == "U", True)
    check_info("linalg.eigh", "eigh", wrap(info), A._impl.ndim > 2)
    return _record_many("LinalgEighBackward0", _eigh_back, (A,), (w, V), (True, True), {}, (), (0, 1))


def eigvalsh(Tensor A, str UPLO="L"):
    check_input("linalg.eigvalsh", A, kernel="linalg_eigh")
    if A.requires_grad and is_grad_enabled_c():
        return eigh(A, UPLO)[0]         # backward needs the eigenvectors
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V, info = _C.eigh(A._impl, UPLO == "U", False)
    check_info("linalg.eigvalsh", "eigh", wrap(info), A._impl.ndim > 2)
    return wrap(w)


# ------------------------------------------------------------------ svd
def _svd_back(Node n, gU, gS, gVh):
    U, S, Vh = n.saved_tensors
    m, nn = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if n.full_matrices and m != nn:
        # only the first k singular vectors are determined by A (PyTorch narrows likewise)
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    if gU is None and gVh is None:
        gS = gS if gS is not None else S * 0.0
        return ((U * gS.unsqueeze(-2)) @ Vh,)
    # as PyTorch's svd_backward (reduced): skew(X) = X - X^H, E_jk = S_k^2 - S_j^2
    V = Vh.mT
    gA = None
    S2 = S * S
    eye = _eye(S, k)
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
    if gU is not None:
        UhgU = U.mT @ gU
        gA = (UhgU - UhgU.mT) * S.unsqueeze(-2)
    if gVh is not None:
        gV = gVh.mT
        VhgV = V.mT @ gV
        term = S.unsqueeze(-1) * (VhgV - VhgV.mT)
        gA = term if gA is None else gA + term
    gA = gA / E
    if gS is not None:
        gA = gA + _diag_embed(gS)
    if m > nn and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mT @ gUSinv)
        gA = gA @ Vh
    elif m < nn and gVh is not None:
        gA = gA @ Vh
        gVSinv = gVh.mT / S.unsqueeze(-2)
        gA = gA + gVSinv.mT - (gVSinv.mT @ V) @ Vh
        gA = U @ gA
    else:
        gA = U @ (gA @ Vh)
    return (gA,)


def svd(Tensor A, bint full_matrices=True):
    check_input("linalg.svd", A, square=False, kernel="linalg_svd")
    U, S, Vh, info = _C.svd(A._impl, full_matrices, True)
    check_info("linalg.svd", "svd", wrap(info), A._impl.ndim > 2)
    return _record_many("LinalgSvdBackward0", _svd_back, (A,), (U, S, Vh), (True, True, True),
                        {"full_matrices": full_matrices}, (), (0, 1, 2))


def svdvals(Tensor A):
    check_input("linalg.svdvals", A, square=False, kernel="linalg_svd")
    if A.requires_grad and is_grad_enabled_c():
        return svd(A, full_matrices=False)[1]       # backward needs the singular vectors
    U, S, Vh, info = _C.svd(A._impl, False, False)
    check_info("linalg.svdvals", "svd", wrap(info), A._impl.ndim > 2)
    return wrap(S)


def lu_factor_ex(Tensor A):
    """(LU, pivots, info) of P A = L U; not differentiable in tinytorch."""
    check_input("linalg.lu_factor", A)
    if A.requires_grad and is_grad_enabled_c():
        raise NotImplementedError("linalg.lu_factor: the derivative of the LU factorization is not implemented "
                                  "in tinytorch (solve, inv, det and slogdet are differentiable)")
    return tuple(wrap(t) for t in _C.lu_factor_ex(A._impl))


def lu_solve(Tensor LU, Tensor pivots, Tensor B, bint adjoint=False):
    if LU.requires_grad or B.requires_grad:
        if is_grad_enabled_c():
            raise NotImplementedError("linalg.lu_solve: not differentiable in tinytorch; use linalg.solve")
    return wrap(_C.lu_solve(LU._impl, pivots._impl, B._impl, adjoint))
