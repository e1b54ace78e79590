"""Per-rank bootstrap used by ``tinytorch.distributed.run --backend mpi`` under ``mpiexec``.

Maps MPI's rank (PMI_RANK / MPI_LOCALRANKID from hydra) to RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE (in a multi-node job, ``TINYTORCH_NNODES`` > 1, the node's mpiexec world is one
node: RANK = GROUP_RANK * its size + its MPI rank, WORLD_SIZE = TINYTORCH_NNODES * its size), then runs the command as a child process (which inherits the PMI connection and
calls MPI_Init itself), teeing its output. A failing child's exit code and output tail go to
``$TINYTORCH_RUN_DIR/rank<r>.{exit,tail}`` for the launcher. Not an MPI process itself."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def _record(rank: str, code: int) -> None:
    d = os.environ.get("TINYTORCH_RUN_DIR")
    if not d:
        return
    tmp = os.path.join(d, f"rank{rank}.exit.tmp{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(f"{time.time():.6f} {rank} {code}\n")
    os.replace(tmp, os.path.join(d, f"rank{rank}.exit"))


def _child(argv: list[str]) -> int:
    """Runs the script (``--module`` / path) in this process; on failure calls MPI_Abort(code) when
    MPI was initialized, so mpiexec stops the other ranks instead of letting them hang."""
    import runpy
    import traceback
    mode, target, args = argv[0], argv[1], argv[2:]
    code = 0
    try:
        if mode == "--module":
            sys.argv = [target] + args
            sys.path.insert(0, os.getcwd())   # as `python -m`
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [target] + args
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    if code != 0:
        _record(os.environ.get("RANK", "0"), code)
        mpi = sys.modules.get("mpi4py.MPI")
        if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
            sys.stdout.flush()
            sys.stderr.flush()
            time.sleep(0.3)          # let the bootstrap pass the last lines on before mpiexec kills it
            mpi.COMM_WORLD.Abort(code)
    return code


def main() -> int:
    # Run by path (not with -m, which would put the current directory first on sys.path): drop this
    # file's directory, so the script sees the sys.path `python script.py` would give it.
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    if sys.argv[1] == "--child":
        return _child(sys.argv[2:])
    mode, cmd = sys.argv[1], sys.argv[2:]
    if mode != "--no-python":
        cmd = [sys.executable, "-u", os.path.abspath(__file__), "--child", mode] + cmd
    rank = os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    size = os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    local = os.environ.get("MPI_LOCALRANKID", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank))
    nlocal = os.environ.get("MPI_LOCALNRANKS", os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", size))
    nnodes = int(os.environ.get("TINYTORCH_NNODES") or 1)
    if nnodes > 1:      # this mpiexec's world is one node of the job
        local, nlocal = rank, size
        rank = str(int(os.environ.get("GROUP_RANK", "0")) * int(size) + int(rank))
        size = str(nnodes * int(size))
    env = dict(os.environ, RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=nlocal,
               PYTHONUNBUFFERED="1")
    from tinytorch.distributed._run_workers import set_pdeathsig
    from tinytorch.distributed import _run_logs
    route = _run_logs.route_from_env(os.environ["TINYTORCH_RUN_LOGS"], int(local)) \
        if os.environ.get("TINYTORCH_RUN_LOGS") else None
    split = route is not None and route.splits_streams
    # close_fds=False: the child inherits hydra's PMI_FD
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE if split else subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, close_fds=False, preexec_fn=set_pdeathsig)

    def forward(signum, frame):
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, forward)
    d = os.environ.get("TINYTORCH_RUN_DIR")
    log = open(os.path.join(d, f"rank{rank}.log"), "ab") if d else None
    if split:
        import collections

        class _Tail(collections.deque):   # the launcher's failure report reads rank<r>.log
            def append(self, line) -> None:
                if log is not None:
                    log.write(line)
                    log.flush()

        tail = _Tail()
        for t in (route.pump(proc.stdout, _run_logs.STDOUT, tail), route.pump(proc.stderr, _run_logs.STDERR, tail)):
            t.join()
    else:
        out = sys.stdout.buffer
        for line in iter(proc.stdout.readline, b""):
            out.write(line)
            out.flush()
            if log is not None:
                log.write(line)
                log.flush()
    rc = proc.wait()
    code = 128 - rc if rc < 0 else rc
    if code != 0 and not os.path.exists(os.path.join(d or "/nonexistent", f"rank{rank}.exit")):
        _record(rank, code)
    return code


if __name__ == "__main__":
    sys.exit(main())
