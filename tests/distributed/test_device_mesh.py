"""DeviceMesh / init_device_mesh on the MPI backend: 1-D and 2-D meshes, their groups and sub-meshes."""
from __future__ import annotations

import pytest

from dist_helpers import launch, needs_mpi


@needs_mpi
@pytest.mark.parametrize("nproc, shape", [(2, "2"), (4, "2x2"), (4, "1x4"), (4, "4x1")])
def test_device_mesh_groups(nproc, shape):
    rc, out, _ = launch("device_mesh.py", shape, nproc=nproc, timeout=120)
    assert rc == 0, out
    assert out.count("mesh OK") == nproc, out
