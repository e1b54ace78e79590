"""SyncBatchNorm's all-reduced statistics and gradients across processes (MPI backend, CPU)."""
from __future__ import annotations

from dist_helpers import launch_ok, needs_mpi


@needs_mpi
def test_sync_batchnorm_mpi_3_ranks():
    launch_ok("sync_batchnorm.py", nproc=3, ok="SyncBatchNorm OK")
