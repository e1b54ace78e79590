"""SyncBatchNorm's all-reduced statistics and gradients across processes (MPI backend, CPU)."""
from __future__ import annotations

from dist_helpers import launch, needs_mpi


@needs_mpi
def test_sync_batchnorm_mpi_3_ranks():
    rc, out, _ = launch("sync_batchnorm.py", nproc=3, timeout=120)
    assert rc == 0, out
    assert out.count("SyncBatchNorm OK") == 3, out
