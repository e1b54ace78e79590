"""tinytorch._C random numbers: reproducibility, thread independence, distribution checks."""
import numpy as np
import pytest

from tinytorch import _C

BOOL, U8, I32, I64, F16, BF16, F32, F64 = range(8)
FLOATS = [F32, F16, BF16, F64]
CPU = _C.Device("cpu")


def to_np(t):
    if t.dtype_code == BF16:
        return t.to_dtype(F32).numpy().copy()
    return t.numpy().copy()


def philox_ref(seed, counter):
    """Philox4x32-10 in pure Python, the reference for the C++/CUDA stream."""
    M0, M1, W0, W1, mask = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 0xFFFFFFFF
    c = [counter & mask, (counter >> 32) & mask, 0, 0]
    k0, k1 = seed & mask, (seed >> 32) & mask
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k1) & mask, p0 & mask]
        k0, k1 = (k0 + W0) & mask, (k1 + W1) & mask
    return c


def test_stream_matches_reference_philox():
    g = _C.Generator(1234)
    x = _C.empty([6], F64, CPU)
    _C.uniform_(x, 0.0, 1.0, g)
    ref = []
    for i in range(6):
        r = philox_ref(1234, i)
        ref.append((((r[0] << 32) | r[1]) >> 11) * 2.0**-53)
    np.testing.assert_array_equal(x.numpy(), ref)
    y = _C.empty([3], F32, CPU)
    _C.uniform_(y, 0.0, 1.0, g)  # continues at counter 6
    np.testing.assert_array_equal(y.numpy(), np.float32([(philox_ref(1234, 6 + i)[0] >> 8) * 2.0**-24
                                                          for i in range(3)]))
    assert g.get_state_tuple() == (1234, 9)


@pytest.mark.parametrize("code", FLOATS)
def test_same_seed_same_numbers_any_thread_count(code):
    old = _C.get_num_threads()
    outs = []
    try:
        for nt in (1, 2, 3):
            _C.set_num_threads(nt)
            _C.manual_seed(42)
            a = to_np(_C.rand([70001], code, CPU))
            b = to_np(_C.randn([333, 211], code, CPU))
            outs.append((a, b))
    finally:
        _C.set_num_threads(old)
    for a, b in outs[1:]:
        np.testing.assert_array_equal(a, outs[0][0])
        np.testing.assert_array_equal(b, outs[0][1])
    _C.manual_seed(43)
    assert not np.array_equal(to_np(_C.rand([100], code, CPU)), outs[0][0][:100])


def test_state_roundtrip_and_generators():
    g = _C.Generator(7)
    x = _C.empty([10], F32, CPU)
    _C.normal_(x, 0.0, 1.0, g)
    st = g.get_state()
    assert isinstance(st, bytes) and len(st) == 16
    tup = g.get_state_tuple()
    a = _C.empty([5], F32, CPU)
    _C.normal_(a, 0.0, 1.0, g)
    g.set_state(st)
    b = _C.empty([5], F32, CPU)
    _C.normal_(b, 0.0, 1.0, g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g.set_state(tup)
    _C.normal_(b, 0.0, 1.0, g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the default generator is independent from g
    _C.manual_seed(7)
    d = _C.default_generator()
    assert d.initial_seed() == 7 and d.get_state_tuple() == (7, 0)
    c = _C.empty([10], F32, CPU)
    _C.normal_(c, 0.0, 1.0)
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    assert d.get_state_tuple() == (7, 10)
    s = _C.seed()
    assert _C.initial_seed() == s
    _C.manual_seed(-1)  # negative seeds wrap mod 2^64 like torch
    assert _C.initial_seed() == 2**64 - 1


def test_uniform_normal_moments():
    _C.manual_seed(0)
    x = _C.empty([200000], F64, CPU)
    _C.uniform_(x, -2.0, 3.0)
    v = x.numpy()
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.mean() - 0.5) < 0.02 and abs(v.var() - 25 / 12) < 0.03
    for code in FLOATS:
        y = _C.empty([200000], code, CPU)
        _C.normal_(y, 1.5, 2.0)
        w = to_np(y).astype(np.float64)
        assert abs(w.mean() - 1.5) < 0.03 and abs(w.std() - 2.0) < 0.03
        # Kolmogorov-Smirnov distance to N(1.5, 2) is small
        from math import erf, sqrt
        s = np.sort(w[:20000])
        cdf = 0.5 * (1 + np.vectorize(erf)((s - 1.5) / (2.0 * sqrt(2))))
        assert np.abs(cdf - np.arange(1, 20001) / 20000).max() < 0.02


def test_uniform_noncontiguous_is_rowmajor():
    g = _C.Generator(5)
    base = _C.empty([4, 6], F32, CPU)
    t = base.transpose(0, 1)  # (6, 4) view
    _C.uniform_(t, 0.0, 1.0, g)
    g2 = _C.Generator(5)
    ref = _C.empty([6, 4], F32, CPU)
    _C.uniform_(ref, 0.0, 1.0, g2)
    np.testing.assert_array_equal(t.numpy(), ref.numpy())


def test_bernoulli():
    _C.manual_seed(1)
    x = _C.empty([100000], F32, CPU)
    _C.bernoulli_(x, 0.3)
    v = x.numpy()
    assert set(np.unique(v)) <= {0.0, 1.0} and abs(v.mean() - 0.3) < 0.01
    probs = np.tile(np.array([0.0, 0.1, 0.9, 1.0], np.float64), 25000)
    out = _C.bernoulli(_C.from_numpy(probs)).numpy().reshape(-1, 4)
    assert out[:, 0].sum() == 0 and out[:, 3].sum() == 25000
    assert abs(out[:, 1].mean() - 0.1) < 0.01 and abs(out[:, 2].mean() - 0.9) < 0.01
    b = _C.empty([1000], BOOL, CPU)
    _C.bernoulli_(b, 0.5)
    assert 400 < b.numpy().sum() < 600


def test_randint_randperm():
    _C.manual_seed(3)
    r = _C.randint(-5, 7, [60000], I64, None).numpy()
    assert r.min() == -5 and r.max() == 6
    counts = np.bincount(r + 5)
    assert counts.min() > 4500 and counts.max() < 5500
    r32 = _C.randint(0, 10, [3, 4], I32, None)
    assert r32.dtype_code == I32 and r32.shape == (3, 4)
    p = _C.randperm(1000).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    _C.manual_seed(3)
    _C.randint(-5, 7, [60000], I64, None)
    _C.randint(0, 10, [3, 4], I32, None)  # 12 more counters
    np.testing.assert_array_equal(_C.randperm(1000).numpy(), p)


@pytest.mark.parametrize("code", FLOATS)
def test_dropout(code):
    _C.manual_seed(11)
    xn = np.random.default_rng(0).standard_normal((300, 200))
    x = _C.from_numpy(xn.astype(np.float32)).to_dtype(code)
    xv = to_np(x).astype(np.float64)
    y, mask = _C.dropout(x, 0.25, True)
    m = mask.numpy()
    assert m.dtype == np.bool_ and abs(m.mean() - 0.75) < 0.01
    tol = {F16: 1e-3, BF16: 1e-2}.get(code, 1e-6)
    np.testing.assert_allclose(to_np(y), np.where(m, xv / 0.75, 0), rtol=tol, atol=tol)
    g = _C.from_numpy(np.ones((300, 200), np.float32)).to_dtype(code)
    gi = to_np(_C.dropout_backward(g, mask, 0.25))
    np.testing.assert_allclose(gi, np.where(m, 1 / 0.75, 0), rtol=tol)
    y_eval, m_eval = _C.dropout(x, 0.25, False)
    np.testing.assert_array_equal(to_np(y_eval), xv)
    assert m_eval.numpy().all()
    y1, m1 = _C.dropout(x.transpose(0, 1), 1.0, True)
    assert not m1.numpy().any() and (to_np(y1) == 0).all()


def test_dropout_mask_is_the_documented_stream():
    """Element i keeps when word i % 4 of philox(seed, offset + i / 4) gives U >= p (24-bit uniform,
    compared in float32), for chunk boundaries at every residue mod 4 and any thread count."""
    old = _C.get_num_threads()
    try:
        for nt, n in ((1, 4097), (2, 10007), (3, 3)):
            _C.set_num_threads(nt)
            g = _C.Generator(77)
            x = _C.from_numpy(np.ones(n, np.float32))
            _, mask = _C.dropout(x, 0.3, True, g)
            words = [philox_ref(77, i // 4)[i % 4] for i in range(n)]
            keep = np.float32([(w >> 8) * 2.0**-24 for w in words]) >= np.float32(0.3)
            np.testing.assert_array_equal(mask.numpy(), keep)
            assert g.get_state_tuple() == (77, n)  # the op still reserves numel counters
    finally:
        _C.set_num_threads(old)


def test_errors():
    x = _C.empty([3], I64, CPU)
    with pytest.raises(RuntimeError, match="floating"):
        _C.uniform_(x, 0.0, 1.0)
    f = _C.empty([3], F32, CPU)
    with pytest.raises(RuntimeError, match="range"):
        _C.uniform_(f, 1.0, 0.0)
    with pytest.raises(RuntimeError, match="std"):
        _C.normal_(f, 0.0, -1.0)
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        _C.bernoulli_(f, 1.5)
    with pytest.raises(RuntimeError, match="less than 'to'"):
        _C.randint(5, 5, [2], I64, None)
    with pytest.raises(ValueError, match="dropout probability"):
        _C.dropout(f, 1.5, True)
    with pytest.raises(ValueError, match="16-byte"):
        _C.Generator(1).set_state(b"abc")
    with pytest.raises(TypeError):
        _C.Generator(1).set_state([1, 2, 3])
