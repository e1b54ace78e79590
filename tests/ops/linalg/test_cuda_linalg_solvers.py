"""tinytorch.linalg's factorizations and solvers on CUDA (cuSOLVER/cuBLAS) against the CPU (LAPACK):
values (singular/eigen vectors and QR factors compared up to their signs), batched and strided
inputs, gradients, info codes and PyTorch's errors. Tolerances: TOL scaled by the condition
numbers of the problems (below ~30), as tests/ops/linalg/test_linalg_solvers.py."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import TOL, to_numpy

pytestmark = pytest.mark.cuda

LA = tt.linalg
DTYPES = ["float64", "float32"]
NON_PD = np.array([[1.0, 2.0], [2.0, 1.0]])
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def _tol(dtype, scale=100):
    rtol, atol = TOL[dtype]
    return rtol * scale, atol * scale


def close(gpu, cpu, dtype, what=""):
    assert gpu.device.type == "cuda", what
    assert tuple(gpu.shape) == tuple(cpu.shape), what
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(to_numpy(gpu), to_numpy(cpu), rtol=rtol, atol=atol, err_msg=what)


def sign_fix(t):
    """Columns scaled so their largest-magnitude entry is positive (numpy, float64)."""
    v = to_numpy(t)
    idx = np.argmax(np.abs(v), axis=-2)
    return v * np.sign(np.take_along_axis(v, idx[..., None, :], -2))


def pair(array, dtype, transposed=False):
    """(cpu, gpu) tensors with the values of array (transposed: as a .mT view of the transpose)."""
    a = np.asarray(array, dtype=np.float64)
    if transposed:
        c = tt.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=getattr(tt, dtype)).mT
    else:
        c = tt.tensor(a, dtype=getattr(tt, dtype))
    return c, c.cuda()


def well_conditioned(batch, n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, batch + (n, n)) + 2 * n * np.eye(n)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_square_solvers(dtype, batch, transposed):
    ac, ag = pair(well_conditioned(batch, 5), dtype, transposed)
    bc, bg = pair(np.random.default_rng(1).uniform(-1, 1, batch + (5, 3)), dtype)
    close(LA.solve(ag, bg), LA.solve(ac, bc), dtype, "solve")
    close(LA.solve(ag, bg.mT, left=False), LA.solve(ac, bc.mT, left=False), dtype, "solve left=False")
    close(LA.inv(ag), LA.inv(ac), dtype, "inv")
    close(LA.det(ag), LA.det(ac), dtype, "det")
    close(LA.slogdet(ag).logabsdet, LA.slogdet(ac).logabsdet, dtype, "slogdet")
    close(LA.matrix_power(ag, -2), LA.matrix_power(ac, -2), dtype, "matrix_power")
    for upper in (False, True):
        close(LA.solve_triangular(ag, bg, upper=upper), LA.solve_triangular(ac, bc, upper=upper), dtype, "trsm")
    spd = ac @ ac.mT
    close(LA.cholesky(spd.cuda()), LA.cholesky(spd), dtype, "cholesky")
    close(LA.cholesky(spd.cuda(), upper=True), LA.cholesky(spd, upper=True), dtype, "cholesky upper")
    w, V = LA.eigh(spd.cuda())
    wc, Vc = LA.eigh(spd)
    close(w, wc, dtype, "eigh values")
    np.testing.assert_allclose(sign_fix(V), sign_fix(Vc), *_tol(dtype))
    close(LA.eigvalsh(spd.cuda(), UPLO="U"), LA.eigvalsh(spd, UPLO="U"), dtype, "eigvalsh")


@pytest.mark.parametrize("shape", [(6, 4), (4, 4), (3, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_svd_lstsq(dtype, shape):
    rng = np.random.default_rng(2)
    ac, ag = pair(rng.uniform(-1, 1, (2,) + shape), dtype, transposed=True)
    for mode in ("reduced", "complete"):
        Q, R = LA.qr(ag, mode=mode)
        Qc, Rc = LA.qr(ac, mode=mode)
        d, dc = np.sign(np.diagonal(to_numpy(R), 0, -2, -1)), np.sign(np.diagonal(to_numpy(Rc), 0, -2, -1))
        k = d.shape[-1]
        np.testing.assert_allclose(to_numpy(Q)[..., :k] * d[..., None, :], to_numpy(Qc)[..., :k] * dc[..., None, :],
                                   *_tol(dtype))
        close(Q @ R, ac, dtype, f"qr {mode} reconstruction")
    for full in (False, True):
        U, S, Vh = LA.svd(ag, full_matrices=full)
        Uc, Sc, Vhc = LA.svd(ac, full_matrices=full)
        close(S, Sc, dtype, "singular values")
        assert tuple(U.shape) == tuple(Uc.shape) and tuple(Vh.shape) == tuple(Vhc.shape)
        k = S.shape[-1]
        close((U.narrow(-1, 0, k) * S.unsqueeze(-2)) @ Vh.narrow(-2, 0, k), ac, dtype, "svd reconstruction")
        close(U.mT @ U, tt.eye(U.shape[-1], dtype=U.dtype).expand(2, -1, -1), dtype, "U orthonormal")
        np.testing.assert_allclose(sign_fix(U.narrow(-1, 0, k)), sign_fix(Uc.narrow(-1, 0, k)), *_tol(dtype))
    close(LA.svdvals(ag), LA.svdvals(ac), dtype, "svdvals")
    close(LA.pinv(ag), LA.pinv(ac), dtype, "pinv")
    assert LA.matrix_rank(ag).tolist() == LA.matrix_rank(ac).tolist()
    bc, bg = pair(rng.uniform(-1, 1, (2, shape[0], 2)), dtype)
    for driver in ("gelsd", "gels"):
        close(LA.lstsq(ag, bg, driver=driver).solution, LA.lstsq(ac, bc, driver=driver).solution, dtype, driver)


def test_gradients_match_cpu():
    rng = np.random.default_rng(3)
    cases = [
        (lambda A: LA.solve(A, A.sum(-1, keepdim=True)), well_conditioned((2,), 4)),
        (lambda A: LA.inv(A), well_conditioned((), 4)),
        (lambda A: LA.det(A) + LA.slogdet(A).logabsdet, well_conditioned((2,), 3)),
        (lambda A: LA.cholesky(A @ A.mT), well_conditioned((2,), 4)),
        (lambda A: LA.qr(A).Q * LA.qr(A).R.sum(), rng.uniform(-1, 1, (5, 3))),
        (lambda A: (lambda w, V: (V * w.unsqueeze(-2)) @ V.mT)(*LA.eigh(A + A.mT)), rng.uniform(-1, 1, (2, 4, 4))),
        (lambda A: (lambda U, S, Vh: (U * S.exp()) @ Vh)(*LA.svd(A, full_matrices=False)), rng.uniform(-1, 1, (4, 3))),
        (lambda A: LA.pinv(A), rng.uniform(-1, 1, (3, 5))),
        (lambda A: LA.solve_triangular(A, A.mT, upper=True), well_conditioned((), 3)),
    ]
    for i, (fn, array) in enumerate(cases):
        c = tt.tensor(array, requires_grad=True)
        g = tt.tensor(array).cuda().requires_grad_(True)
        weights = tt.tensor(rng.uniform(0.5, 1.5, tuple(fn(c.detach()).shape)))
        (fn(c) * weights).sum().backward()
        (fn(g) * weights.cuda()).sum().backward()
        close(g.grad, c.grad, "float64", f"case {i}")


def test_errors_and_info_codes():
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The factorization could not be completed because "
                                             r"the input is not positive-definite \(the leading minor of order 2"):
        LA.cholesky(tt.tensor(np.stack([np.eye(2), NON_PD])).cuda())
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is singular"):
        LA.solve(tt.tensor(SINGULAR).cuda(), tt.ones(2, dtype=tt.float64).cuda())
    with pytest.raises(LA.LinAlgError, match="The diagonal element 2 is zero"):
        LA.inv(tt.tensor(SINGULAR).cuda())
    assert LA.cholesky_ex(tt.tensor(np.stack([np.eye(2), NON_PD])).cuda()).info.tolist() == [0, 2]
    assert LA.inv_ex(tt.tensor(SINGULAR).cuda()).info.item() == 2
    assert LA.det(tt.tensor(SINGULAR).cuda()).item() == 0.0
    with pytest.raises(NotImplementedError, match="linalg_eigh_cuda"):
        LA.eigh(tt.ones(2, 2, dtype=tt.float16).cuda())
    with pytest.raises(RuntimeError, match="same device"):
        LA.solve(tt.eye(2).cuda(), tt.ones(2, 1))


def test_matches_torch_on_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    a = well_conditioned((2,), 4, seed=5)
    ours, theirs = tt.tensor(a).cuda(), torch.tensor(a, device="cuda")
    np.testing.assert_allclose(to_numpy(LA.inv(ours)), torch.linalg.inv(theirs).cpu().numpy(), 1e-10, 1e-10)
    np.testing.assert_allclose(to_numpy(LA.svdvals(ours)), torch.linalg.svdvals(theirs).cpu().numpy(), 1e-10, 1e-10)
    np.testing.assert_allclose(to_numpy(LA.eigvalsh(ours + ours.mT)),
                               torch.linalg.eigvalsh(theirs + theirs.mT).cpu().numpy(), 1e-10, 1e-10)
