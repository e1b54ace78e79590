"""PyTorch's parameter names on the op functions: a call written for PyTorch with keyword arguments
(``tinytorch.sum(input=x, dim=0, keepdim=True)``, ``x.view(size=(3, 2))``) works and gives what the
positional call gives. The names are PyTorch 2.13's (its Python signatures: ``input`` for the
first tensor, ``other``, ``mat2``, ``dim``, ``keepdim``, ...); ``cases`` takes the library as an
argument, so the same table runs against torch itself."""
import functools

import numpy as np
import pytest

import tinytorch
import tinytorch.nn.functional


def cases(tt, F):
    """(id, callable, positional args, keyword args): the two calls must agree."""
    rng = np.random.default_rng(0)

    def T(*shape):
        return tt.tensor(rng.standard_normal(shape).astype(np.float32))

    x, sq, b3, img, seq = T(2, 3), T(3, 3), T(2, 3, 4), T(1, 2, 5, 5), T(1, 2, 7)
    w2, w1, wt2 = T(4, 2, 3, 3), T(4, 2, 3), T(2, 3, 3, 3)
    lin_w, lin_b = T(4, 3), T(4)
    idx = tt.tensor(np.array([[0, 1, 0]], dtype=np.int64))
    rows = tt.tensor(np.array([1, 0], dtype=np.int64))
    mask = x > 0
    target = tt.tensor(np.array([2, 0], dtype=np.int64))
    emb_w = T(5, 3)
    f64 = tt.float64
    spd = sq @ sq.mT + tt.eye(3) * 3

    def on_copy(method):        # an in-place method, on a fresh copy of x at each call
        return lambda *args, **kwargs: getattr(x.clone(), method)(*args, **kwargs)
    return [
        # reductions and scans
        ("sum", tt.sum, (x, 0, True), dict(input=x, dim=0, keepdim=True, dtype=f64)),
        ("mean", tt.mean, (x, 1, True), dict(input=x, dim=1, keepdim=True)),
        ("prod", tt.prod, (x, 1), dict(input=x, dim=1, keepdim=False)),
        ("amax", tt.amax, (x, 0, True), dict(input=x, dim=0, keepdim=True)),
        ("amin", tt.amin, (x, 1), dict(input=x, dim=1)),
        ("max_dim", tt.max, (x, 1, True), dict(input=x, dim=1, keepdim=True)),
        ("max_other", tt.max, (x, x * 0.5), dict(input=x, other=x * 0.5)),
        ("min_dim", tt.min, (x, 0), dict(input=x, dim=0)),
        ("argmax", tt.argmax, (x, 1, True), dict(input=x, dim=1, keepdim=True)),
        ("argmin", tt.argmin, (x, 0), dict(input=x, dim=0)),
        ("all", tt.all, (mask, 1), dict(input=mask, dim=1, keepdim=False)),
        ("any", tt.any, (mask, 0, True), dict(input=mask, dim=0, keepdim=True)),
        ("var", tt.var, (x, 1), dict(input=x, dim=1, correction=1, keepdim=False)),
        ("var_unbiased", tt.var, (x, 1, False, True), dict(input=x, dim=1, unbiased=False, keepdim=True)),
        ("std", tt.std, (x, 0), dict(input=x, dim=0, correction=1)),
        ("logsumexp", tt.logsumexp, (x, 1, True), dict(input=x, dim=1, keepdim=True)),
        ("norm", tt.norm, (x, 2, 1, True), dict(input=x, p=2, dim=1, keepdim=True)),
        ("cumsum", tt.cumsum, (x, 1), dict(input=x, dim=1)),
        ("cumprod", tt.cumprod, (x, 0), dict(input=x, dim=0)),
        # softmax and normalization
        ("softmax", tt.softmax, (x, 1), dict(input=x, dim=1)),
        ("log_softmax", tt.log_softmax, (x, 0), dict(input=x, dim=0)),
        ("F.softmax", F.softmax, (x, 1), dict(input=x, dim=1)),
        ("layer_norm", F.layer_norm, (x, [3], lin_w[0], lin_b[:3], 1e-5),
         dict(input=x, normalized_shape=[3], weight=lin_w[0], bias=lin_b[:3], eps=1e-5)),
        ("rms_norm", F.rms_norm, (x, [3], lin_w[0], 1e-6),
         dict(input=x, normalized_shape=[3], weight=lin_w[0], eps=1e-6)),
        # shape
        ("reshape", tt.reshape, (x, (3, 2)), dict(input=x, shape=(3, 2))),
        ("permute", tt.permute, (b3, (2, 0, 1)), dict(input=b3, dims=(2, 0, 1))),
        ("transpose", tt.transpose, (x, 0, 1), dict(input=x, dim0=0, dim1=1)),
        ("t", tt.t, (x,), dict(input=x)),
        ("movedim", tt.movedim, (b3, 0, 2), dict(input=b3, source=0, destination=2)),
        ("broadcast_to", tt.broadcast_to, (x, (2, 2, 3)), dict(input=x, size=(2, 2, 3))),
        ("squeeze", tt.squeeze, (x[None], 0), dict(input=x[None], dim=0)),
        ("unsqueeze", tt.unsqueeze, (x, 1), dict(input=x, dim=1)),
        ("flatten", tt.flatten, (b3, 1, 2), dict(input=b3, start_dim=1, end_dim=2)),
        ("unflatten", tt.unflatten, (x, 1, (3, 1)), dict(input=x, dim=1, sizes=(3, 1))),
        ("narrow", tt.narrow, (x, 1, 1, 2), dict(input=x, dim=1, start=1, length=2)),
        ("select", tt.select, (x, 0, 1), dict(input=x, dim=0, index=1)),
        ("unbind", tt.unbind, (x, 1), dict(input=x, dim=1)),
        ("split", tt.split, (x, 2, 1), dict(tensor=x, split_size_or_sections=2, dim=1)),
        ("chunk", tt.chunk, (x, 2, 1), dict(input=x, chunks=2, dim=1)),
        ("diagonal", tt.diagonal, (sq, 1, 0, 1), dict(input=sq, offset=1, dim1=0, dim2=1)),
        ("as_strided", tt.as_strided, (sq, (2, 2), (1, 3), 1),
         dict(input=sq, size=(2, 2), stride=(1, 3), storage_offset=1)),
        ("flip", tt.flip, (x, [1]), dict(input=x, dims=[1])),
        ("cat", tt.cat, ([x, x], 1), dict(tensors=[x, x], dim=1)),
        ("stack", tt.stack, ([x, x], 1), dict(tensors=[x, x], dim=1)),
        ("hstack", tt.hstack, ([x, x],), dict(tensors=[x, x])),
        ("vstack", tt.vstack, ([x, x],), dict(tensors=[x, x])),
        ("Tensor.view", x.view, (3, 2), dict(size=(3, 2))),
        ("Tensor.reshape", x.reshape, (3, 2), dict(shape=(3, 2))),
        ("Tensor.permute", b3.permute, (1, 0, 2), dict(dims=(1, 0, 2))),
        ("Tensor.expand", x[:1].expand, (4, 3), dict(size=(4, 3))),
        ("Tensor.repeat", x.repeat, (2, 1), dict(repeats=(2, 1))),
        ("Tensor.unfold", x.unfold, (1, 2, 1), dict(dimension=1, size=2, step=1)),
        ("Tensor.expand_as", x[:1].expand_as, (x,), dict(other=x)),
        ("Tensor.view_as", x.view_as, (x,), dict(other=x)),
        ("Tensor.reshape_as", sq.reshape_as, (sq,), dict(other=sq)),
        # indexing and sorting
        ("index_select", tt.index_select, (x, 0, rows), dict(input=x, dim=0, index=rows)),
        ("gather", tt.gather, (x, 0, idx), dict(input=x, dim=0, index=idx)),
        ("scatter_src", tt.scatter, (x, 0, idx, x), dict(input=x, dim=0, index=idx, src=x)),
        ("scatter_value", tt.scatter, (x, 0, idx, 2.0), dict(input=x, dim=0, index=idx, value=2.0)),
        ("scatter_add", tt.scatter_add, (x, 0, idx, x), dict(input=x, dim=0, index=idx, src=x)),
        ("masked_fill", tt.masked_fill, (x, mask, 0.5), dict(input=x, mask=mask, value=0.5)),
        ("masked_select", tt.masked_select, (x, mask), dict(input=x, mask=mask)),
        ("nonzero", tt.nonzero, (mask,), dict(input=mask, as_tuple=False)),
        ("index_put", tt.index_put, (x, (rows,), x[:1]),
         dict(input=x, indices=(rows,), values=x[:1], accumulate=False)),
        ("roll", tt.roll, (x, 1, 1), dict(input=x, shifts=1, dims=1)),
        ("tril", tt.tril, (sq, -1), dict(input=sq, diagonal=-1)),
        ("triu", tt.triu, (sq, 1), dict(input=sq, diagonal=1)),
        ("sort", tt.sort, (x, 0, True), dict(input=x, dim=0, descending=True)),
        ("argsort", tt.argsort, (x, 1, True), dict(input=x, dim=1, descending=True)),
        ("topk", tt.topk, (x, 2, 1, True, True), dict(input=x, k=2, dim=1, largest=True, sorted=True)),
        ("Tensor.index_put_", on_copy("index_put_"), ((rows,), x[:1]), dict(indices=(rows,), values=x[:1])),
        ("Tensor.masked_fill_", on_copy("masked_fill_"), (mask, 0.5), dict(mask=mask, value=0.5)),
        ("Tensor.scatter_", on_copy("scatter_"), (0, idx, x), dict(dim=0, index=idx, src=x)),
        ("Tensor.scatter_add_", on_copy("scatter_add_"), (0, idx, x), dict(dim=0, index=idx, src=x)),
        # elementwise
        ("add", tt.add, (x, sq[:2]), dict(input=x, other=sq[:2])),
        ("clamp", tt.clamp, (x, -0.5, 0.5), dict(input=x, min=-0.5, max=0.5)),
        ("pow", tt.pow, (x, 2), dict(input=x, exponent=2)),
        ("div", tt.div, (x, 2.0), dict(input=x, other=2.0, rounding_mode=None)),
        ("where", tt.where, (mask, x, 0.0), dict(condition=mask, input=x, other=0.0)),
        # matrix products
        ("matmul", tt.matmul, (x, sq), dict(input=x, other=sq)),
        ("mm", tt.mm, (x, sq), dict(input=x, mat2=sq)),
        ("bmm", tt.bmm, (b3, b3.transpose(1, 2)), dict(input=b3, mat2=b3.transpose(1, 2))),
        ("Tensor.matmul", x.matmul, (sq,), dict(other=sq)),
        ("Tensor.mm", x.mm, (sq,), dict(mat2=sq)),
        # linear algebra: the top-level names take `input`, tinytorch.linalg's `A`, `B`, `UPLO`, ...
        ("inverse", tt.inverse, (spd,), dict(input=spd)),
        ("det", tt.det, (sq,), dict(input=sq)),
        ("logdet", tt.logdet, (spd,), dict(input=spd)),
        ("slogdet", tt.slogdet, (sq,), dict(input=sq)),
        ("cholesky", tt.cholesky, (spd, True), dict(input=spd, upper=True)),
        ("qr", tt.qr, (x.mT, True), dict(input=x.mT, some=True)),
        ("svd", tt.svd, (x, False), dict(input=x, some=False, compute_uv=True)),
        ("pinverse", tt.pinverse, (x, 1e-10), dict(input=x, rcond=1e-10)),
        ("matrix_power", tt.matrix_power, (sq, 3), dict(input=sq, n=3)),
        ("Tensor.inverse", spd.inverse, (), dict()),
        ("linalg.solve", tt.linalg.solve, (spd, x.mT), dict(A=spd, B=x.mT, left=True)),
        ("linalg.eigh", tt.linalg.eigh, (spd, "U"), dict(input=spd, UPLO="U")),
        ("linalg.cholesky_ex", tt.linalg.cholesky_ex, (spd,), dict(input=spd, upper=False, check_errors=True)),
        ("linalg.svd", tt.linalg.svd, (x, False), dict(A=x, full_matrices=False)),
        ("linalg.lstsq", tt.linalg.lstsq, (sq, x.mT), dict(input=sq, b=x.mT, rcond=None)),
        ("linalg.matrix_rank", tt.linalg.matrix_rank, (x,), dict(input=x, atol=0.0, rtol=None, hermitian=False)),
        ("linalg.solve_triangular", functools.partial(tt.linalg.solve_triangular, upper=True), (spd, x.mT),
         dict(input=spd, B=x.mT, left=True)),
        ("linalg.matrix_power", tt.linalg.matrix_power, (sq, -2), dict(input=sq, n=-2)),
        ("linalg.pinv", tt.linalg.pinv, (x,), dict(input=x, atol=None, rtol=None, hermitian=False)),
        ("linalg.cross", tt.linalg.cross, (b3[:, :, :3].mT, b3[:, :, 1:].mT), dict(input=b3[:, :, :3].mT,
                                                                                     other=b3[:, :, 1:].mT, dim=-1)),
        ("F.linear", F.linear, (x, lin_w, lin_b), dict(input=x, weight=lin_w, bias=lin_b)),
        # convolutions and pooling
        ("conv2d", F.conv2d, (img, w2, None, 1, 1), dict(input=img, weight=w2, bias=None, stride=1, padding=1)),
        ("conv1d", F.conv1d, (seq, w1, lin_b, 2), dict(input=seq, weight=w1, bias=lin_b, stride=2)),
        ("conv_transpose2d", F.conv_transpose2d, (img, wt2, None, 2), dict(input=img, weight=wt2, stride=2)),
        ("conv_transpose1d", F.conv_transpose1d, (seq, wt2[:, :, 0], None, 1, 1),
         dict(input=seq, weight=wt2[:, :, 0], padding=1)),
        ("max_pool2d", F.max_pool2d, (img, 2, 1), dict(input=img, kernel_size=2, stride=1)),
        ("avg_pool2d", F.avg_pool2d, (img, 3, 2, 1), dict(input=img, kernel_size=3, stride=2, padding=1)),
        ("adaptive_avg_pool2d", F.adaptive_avg_pool2d, (img, 2), dict(input=img, output_size=2)),
        # embedding, dropout, losses
        ("embedding", F.embedding, (rows, emb_w), dict(input=rows, weight=emb_w)),
        ("one_hot", F.one_hot, (rows, 3), dict(input=rows, num_classes=3)),
        ("dropout", F.dropout, (x, 0.5, False), dict(input=x, p=0.5, training=False)),
        ("nll_loss", F.nll_loss, (F.log_softmax(x, 1), target),
         dict(input=F.log_softmax(x, 1), target=target, reduction="mean")),
        ("cross_entropy", F.cross_entropy, (x, target, None, None, -100, None, "sum", 0.1),
         dict(input=x, target=target, reduction="sum", label_smoothing=0.1)),
    ]


CASES = cases(tinytorch, tinytorch.nn.functional)


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [a for v in r for a in _flat(v)]
    return [r.detach().double().numpy() if r.dtype.is_floating_point else r.numpy()]


@pytest.mark.parametrize("fn, args, kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_keyword_call_matches_positional(fn, args, kwargs):
    expected, got = _flat(fn(*args)), _flat(fn(**kwargs))
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_names_of_the_op_functions():
    """The signatures themselves (as Python's inspect reads them), for the first parameters."""
    import inspect
    from tinytorch._ops import conv, index, linalg, norm, pool, reduce, shape

    def names(f):
        return list(inspect.signature(f).parameters)
    assert names(reduce.sum) == ["input", "dim", "keepdim", "dtype"]
    assert names(reduce.var)[:2] == ["input", "dim"] and "correction" in names(reduce.var)
    assert names(norm.layer_norm) == ["input", "normalized_shape", "weight", "bias", "eps"]
    assert names(index.index_select) == ["input", "dim", "index"]
    assert names(linalg.matmul) == ["input", "other"]
    assert names(linalg.mm) == names(linalg.bmm) == ["input", "mat2"]
    assert names(conv.conv2d) == ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
    assert names(pool.max_pool2d)[:2] == ["input", "kernel_size"]
    assert names(shape.split)[:2] == ["tensor", "split_size_or_sections"]
    assert names(index.one_hot) == ["input", "num_classes"]
