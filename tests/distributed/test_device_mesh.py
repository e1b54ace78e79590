"""DeviceMesh / init_device_mesh on the MPI backend: 1-D and 2-D meshes, their groups and sub-meshes."""
from __future__ import annotations

import pytest

from dist_helpers import launch_ok, needs_mpi


@needs_mpi
@pytest.mark.parametrize("nproc, shape", [(2, "2"), (4, "2x2"), (4, "1x4"), (4, "4x1")])
def test_device_mesh_groups(nproc, shape):
    launch_ok("device_mesh.py", shape, nproc=nproc, ok="mesh OK")
