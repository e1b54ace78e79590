"""Goodness-of-fit helpers for sampler tests (multinomial, distributions): Pearson's chi-square
statistic against an upper quantile, and a power check that a slightly biased sampler would fail."""
from __future__ import annotations

import math

import numpy as np

P = np.array([0.05, 0.1, 0.15, 0.2, 0.0, 0.5])          # one zero-probability category


def chi2_upper(df: int, z: float = 4.265) -> float:
    """The chi-square quantile with upper tail ~1e-5 (z = its normal quantile), by Wilson-Hilferty:
    a correct sampler passes; a biased one's statistic grows with the number of draws."""
    c = 2.0 / (9.0 * df)
    return df * (1.0 - c + z * math.sqrt(c)) ** 3


def chi2(counts: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic over the categories of nonzero probability (and its degrees of freedom);
    any draw of a zero-probability category makes it infinite."""
    n = counts.sum()
    keep = probs > 0
    if counts[~keep].any():
        return math.inf, int(keep.sum()) - 1
    e = n * probs[keep] / probs.sum()
    return float(((counts[keep] - e) ** 2 / e).sum()), int(keep.sum()) - 1


def assert_matches(counts, probs, what=""):
    stat, df = chi2(counts, probs)
    assert stat < chi2_upper(df), f"{what}: chi2 {stat:.1f} >= {chi2_upper(df):.1f} (df {df}), counts {counts}"
    # the test can fail: 1% of the mass moved from the largest category to the smallest nonzero one
    biased = probs / probs.sum()
    big, small = int(np.argmax(biased)), int(np.argmin(np.where(biased > 0, biased, np.inf)))
    biased = biased.copy()
    biased[big] -= 0.01
    biased[small] += 0.01
    assert chi2(counts, biased)[0] > chi2_upper(df), f"{what}: too few draws to detect a 1% bias"
