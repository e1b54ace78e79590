"""``tinytorch.distributed.device_mesh``: PyTorch's ``DeviceMesh`` and ``init_device_mesh``.

A mesh lays the ranks of the default group out as an n-D array (``(dp, tp)``: data parallel by
tensor parallel, say); each of its dimensions has one process group per line of ranks along it,
made with :func:`new_group` on every rank in the same order, as every collective needs. Sub-meshes
(``mesh["tp"]``) reuse those groups."""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from tinytorch._tensor.creation import tensor
from tinytorch.distributed import process_group as _pg
from tinytorch.distributed.process_group import ProcessGroup

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """An n-D layout of the ranks of the default group, with a process group per mesh dimension.

    Args:
        device_type (str): ``"cpu"`` (the MPI backend) or ``"cuda"`` (NCCL).
        mesh (array-like of int): the global ranks, one n-D array whose shape is the mesh's.
        mesh_dim_names (tuple of str, optional): a name for each dimension (``("dp", "tp")``).
    """

    def __init__(self, device_type: str, mesh, *, mesh_dim_names: Optional[Sequence[str]] = None,
                 _groups: Optional[list] = None):
        self.device_type = str(device_type)
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if ranks.ndim == 0 or ranks.size == 0:
            raise ValueError(f"DeviceMesh: mesh must be a non-empty array of ranks, got shape {ranks.shape}")
        if len(set(ranks.flat)) != ranks.size:
            raise ValueError(f"DeviceMesh: mesh names a rank twice: {ranks.tolist()}")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim or len(set(mesh_dim_names)) != ranks.ndim:
                raise ValueError(f"DeviceMesh: mesh_dim_names {mesh_dim_names} must name each of the mesh's "
                                 f"{ranks.ndim} dimensions once")
        self._ranks = ranks
        self.mesh_dim_names = mesh_dim_names
        self._groups = _groups if _groups is not None else self._make_groups()

    def _make_groups(self) -> list:
        world = _pg.get_world_size()
        if self._ranks.size != world or sorted(self._ranks.flat) != list(range(world)):
            raise ValueError(f"DeviceMesh: the mesh of shape {tuple(self._ranks.shape)} must hold each rank of the "
                             f"world (size {world}) once, got {self._ranks.tolist()}")
        me, groups = _pg.get_rank(), []
        for dim in range(self._ranks.ndim):
            lines = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim])
            mine = None
            for line in lines:   # every rank creates every group, in the same order
                ranks = [int(r) for r in line]
                pg = _pg.group.WORLD if len(ranks) == world else _pg.new_group(ranks)
                if me in ranks:
                    mine = pg
            groups.append(mine)
        return groups

    # ---- the mesh's shape
    @property
    def mesh(self):
        """The global ranks as a tensor of the mesh's shape."""
        return tensor(self._ranks)

    @property
    def shape(self) -> tuple:
        return tuple(int(s) for s in self._ranks.shape)

    @property
    def ndim(self) -> int:
        return self._ranks.ndim

    def size(self, mesh_dim: Optional[Union[int, str]] = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return int(self._ranks.size) if mesh_dim is None else self.shape[self._dim(mesh_dim)]

    def _dim(self, mesh_dim: Union[int, str, None]) -> int:
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"DeviceMesh: a {self.ndim}-D mesh needs mesh_dim to choose a dimension")
            return 0
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"DeviceMesh: no dimension named {mesh_dim!r} (names: {self.mesh_dim_names})")
            return self.mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"DeviceMesh: mesh_dim {mesh_dim} is out of range for a {self.ndim}-D mesh")
        return mesh_dim % self.ndim

    # ---- this rank's place
    def get_rank(self) -> int:
        """This process's global rank."""
        return _pg.get_rank()

    def get_coordinate(self) -> Optional[list]:
        """This rank's index along each mesh dimension (None when the mesh doesn't hold it)."""
        where = np.argwhere(self._ranks == _pg.get_rank())
        return [int(i) for i in where[0]] if len(where) else None

    def get_local_rank(self, mesh_dim: Optional[Union[int, str]] = None) -> int:
        """This rank's index along ``mesh_dim`` (its rank in that dimension's group)."""
        coordinate = self.get_coordinate()
        if coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {_pg.get_rank()} is not in the mesh {self._ranks.tolist()}")
        return coordinate[self._dim(mesh_dim)]

    def get_group(self, mesh_dim: Optional[Union[int, str]] = None) -> ProcessGroup:
        """The process group of this rank's line along ``mesh_dim``."""
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self) -> list:
        return list(self._groups)

    def __getitem__(self, names: Union[str, Sequence[str]]) -> "DeviceMesh":
        """The sub-mesh of the named dimensions through this rank (``mesh["tp"]``: this rank's tp line)."""
        names = (names,) if isinstance(names, str) else tuple(names)
        dims = [self._dim(n) for n in names]
        if dims != sorted(dims) or len(set(dims)) != len(dims):
            raise KeyError(f"DeviceMesh: sub-mesh dimensions {names} must be distinct and in the mesh's order "
                           f"{self.mesh_dim_names}")
        coordinate = self.get_coordinate()
        if coordinate is None:
            raise RuntimeError(f"DeviceMesh: rank {_pg.get_rank()} is not in the mesh")
        index = tuple(slice(None) if d in dims else coordinate[d] for d in range(self.ndim))
        return DeviceMesh(self.device_type, self._ranks[index], mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._ranks.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: Sequence[int], *,
                     mesh_dim_names: Optional[Sequence[str]] = None) -> DeviceMesh:
    """A mesh of ``mesh_shape`` over the ranks of the default group in order (PyTorch's): every rank
    calls it with the same arguments; the product of ``mesh_shape`` must be the world size.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        mesh_shape (tuple of int): the size of each mesh dimension (``(2, 4)``: 2 data-parallel
            replicas of 4-way tensor parallel).
        mesh_dim_names (tuple of str, optional): a name for each dimension.
    """
    shape = tuple(int(s) for s in mesh_shape)
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"init_device_mesh: mesh_shape must be positive sizes, got {tuple(mesh_shape)}")
    world = _pg.get_world_size()
    if int(np.prod(shape)) != world:
        raise ValueError(f"init_device_mesh: mesh_shape {shape} holds {int(np.prod(shape))} ranks but the world "
                         f"size is {world}")
    return DeviceMesh(device_type, np.arange(world).reshape(shape), mesh_dim_names=mesh_dim_names)
