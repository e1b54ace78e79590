"""tinytorch.multinomial: the sampled frequencies match the probabilities (Pearson chi-square with
a fixed seed, at a threshold a 1%-biased sampler fails), without-replacement draws are distinct
and follow the sequential-draw law, batches, dtypes, layouts, zero-probability categories,
reproducibility, and PyTorch's errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinytorch as tt

from support.sampling_stats import P, assert_matches, chi2, chi2_upper


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("replacement", [True, False])
def test_single_draw_frequencies(dtype, replacement):
    # n rows of the same distribution, one draw each: both paths' marginal is p
    n = 120_000
    tt.manual_seed(1)
    probs = tt.tensor(np.tile(P * 3.0, (n, 1)), dtype=getattr(tt, dtype))    # unnormalized
    s = tt.multinomial(probs, 1, replacement)
    assert s.dtype == tt.int64 and tuple(s.shape) == (n, 1)
    assert_matches(np.bincount(s.numpy().ravel(), minlength=len(P)), P, f"{dtype} replacement={replacement}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_with_replacement_many_draws(dtype):
    tt.manual_seed(2)
    s = tt.multinomial(tt.tensor(P, dtype=getattr(tt, dtype)), 150_000, replacement=True)
    assert s.dtype == tt.int64 and tuple(s.shape) == (150_000,)
    assert_matches(np.bincount(s.numpy(), minlength=len(P)), P, dtype)


def test_with_replacement_many_categories():
    # K = 1000 exercises 10 binary-search steps; every category is reachable, including the last
    rng = np.random.default_rng(0)
    p = rng.uniform(0.5, 1.5, 1000)
    p[[0, 500, 999]] = [0.0, 0.0, 20.0]
    tt.manual_seed(3)
    s = tt.multinomial(tt.tensor(p), 400_000, True).numpy()
    stat, df = chi2(np.bincount(s, minlength=1000), p)
    assert stat < chi2_upper(df)


def test_without_replacement_pairs():
    # ordered pairs (i, j): P = p_i * p_j / (1 - p_i)  (sequential draws without replacement)
    p = P / P.sum()
    n = 150_000
    tt.manual_seed(4)
    s = tt.multinomial(tt.tensor(np.tile(P, (n, 1))), 2).numpy()
    assert (s[:, 0] != s[:, 1]).all()
    pairs = [(i, j) for i, j in itertools.permutations(range(len(p)), 2)]
    law = np.array([p[i] * p[j] / (1 - p[i]) for i, j in pairs])
    index = {pair: k for k, pair in enumerate(pairs)}
    counts = np.bincount([index[tuple(r)] for r in s], minlength=len(pairs))
    stat, df = chi2(counts, law)
    assert stat < chi2_upper(df)
    # the test can fail: sampling the second draw with replacement-law p_j (ignoring the first) is off
    wrong = np.array([p[i] * p[j] for i, j in pairs])
    assert chi2(counts, wrong)[0] > chi2_upper(df)


def test_without_replacement_is_a_permutation():
    tt.manual_seed(5)
    probs = tt.rand(64, 50) + 0.01
    s = tt.multinomial(probs, 50).numpy()
    assert (np.sort(s, axis=1) == np.arange(50)).all()
    # fewer nonzero categories than samples: the nonzero ones come first (PyTorch does the same)
    s = tt.multinomial(tt.tensor([0.0, 2.0, 0.0, 1.0]), 4).numpy()
    assert sorted(s[:2]) == [1, 3] and sorted(s) == [0, 1, 2, 3]


@pytest.mark.parametrize("replacement", [True, False])
def test_batch_rows_and_layouts(replacement):
    # each row its own distribution; a transposed (non-contiguous) probability matrix
    rows = np.array([[0.7, 0.1, 0.2, 0.0], [0.0, 0.0, 0.0, 1.0], [0.25, 0.25, 0.25, 0.25]])
    probs = tt.tensor(np.ascontiguousarray(rows.T)).transpose(0, 1)
    assert not probs.is_contiguous()
    tt.manual_seed(6)
    n = 60_000
    if replacement:
        s = tt.multinomial(probs, n, True).numpy()
    else:       # one draw per row of n stacked copies (rows cycle 0, 1, 2, 0, ...)
        s = tt.multinomial(probs.repeat(n, 1), 1).numpy().reshape(n, 3).T
        assert sorted(tt.multinomial(probs, 2).numpy()[0]) in ([0, 1], [0, 2], [1, 2])
    assert s.shape[0] == 3
    for r in range(3):
        counts = np.bincount(s[r], minlength=4)
        stat, df = chi2(counts, rows[r])
        if df == 0:
            assert counts[3] == s.shape[1]
        else:
            assert stat < chi2_upper(df), (r, counts)


def test_seed_reproducible_and_generator():
    p = tt.tensor(P)
    tt.manual_seed(7)
    a = tt.multinomial(p, 100, True)
    tt.manual_seed(7)
    b = tt.multinomial(p, 100, True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g1, g2 = tt.Generator().manual_seed(9), tt.Generator().manual_seed(9)
    x = tt.multinomial(p, 3, generator=g1)
    y = p.multinomial(3, generator=g2)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert not np.array_equal(tt.multinomial(p, 100, True, generator=g1).numpy(),
                              tt.multinomial(p, 100, True, generator=g1).numpy())


def test_shapes_and_grad_input():
    p = tt.tensor(P, requires_grad=True)
    s = p.multinomial(3)
    assert tuple(s.shape) == (3,) and s.dtype == tt.int64 and not s.requires_grad
    assert tuple(tt.multinomial(tt.ones(0, 4), 2).shape) == (0, 2)
    assert tuple(tt.multinomial(tt.ones(2, 4), 7, replacement=True).shape) == (2, 7)


@pytest.mark.parametrize("args, kwargs, err, msg", [
    ((tt.tensor([1.0, -1.0]), 1), {}, RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0"),
    ((tt.tensor([1.0, float("nan")]), 2), {}, RuntimeError, "probability tensor contains either"),
    ((tt.tensor([1.0, float("inf")]), 1), {}, RuntimeError, "probability tensor contains either"),
    ((tt.tensor([1.0, -1.0]), 2, True), {}, RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ((tt.tensor([1.0, float("inf")]), 2, True), {}, RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ((tt.tensor([0.0, 0.0]), 1), {}, RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)"),
    ((tt.tensor([[0.0, 0.0], [1.0, 1.0]]), 2, True), {}, RuntimeError, "(sum of probabilities <= 0)"),
    ((tt.ones(2, 2, 2), 1), {}, RuntimeError, "prob_dist must be 1 or 2 dim"),
    ((tt.tensor(1.0), 1), {}, RuntimeError, "prob_dist must be 1 or 2 dim"),
    ((tt.ones(3, dtype=tt.int64), 1), {}, RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ((tt.ones(3), 0), {}, RuntimeError, "cannot sample n_sample <= 0 samples"),
    ((tt.ones(3), 4), {}, RuntimeError, "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ((tt.ones(3), 1.5), {}, TypeError, "argument 'num_samples' (position 2) must be int, not float"),
])
def test_errors(args, kwargs, err, msg):
    with pytest.raises(err) as info:
        tt.multinomial(*args, **kwargs)
    assert msg in str(info.value)


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    for probs, n, repl in [([1.0, -1.0], 1, False), ([1.0, float("nan")], 2, True), ([1.0, float("inf")], 2, True),
                           ([0.0, 0.0], 1, False), ([1.0, 1.0], 3, False)]:
        with pytest.raises(RuntimeError) as ours:
            tt.multinomial(tt.tensor(probs), n, repl)
        with pytest.raises(RuntimeError) as theirs:
            torch.multinomial(torch.tensor(probs), n, repl)
        assert str(ours.value) in str(theirs.value)
