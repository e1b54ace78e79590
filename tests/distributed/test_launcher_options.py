"""torchrun's launcher options on tinytorch.distributed.run: --standalone, --nproc-per-node
auto|gpu|cpu|N, --log-dir with --redirects/--tee (quick 2-process CPU runs), and the mistakes it
refuses before starting any worker."""
import glob
import os

import pytest

import tinytorch.cuda
from dist_helpers import HAVE_MPI, launch
from tinytorch.distributed.run import main, parse_args

HAVE_CUDA = tinytorch.cuda.is_available()

BACKENDS = ["none"] + (["mpi"] if HAVE_MPI else [])   # "none": the local path, no process group


def _logs(log_dir, local_rank, name):
    paths = glob.glob(os.path.join(str(log_dir), "*", "attempt_0", str(local_rank), name))
    assert len(paths) == 1, (log_dir, os.listdir(log_dir))
    return open(paths[0]).read()


@pytest.mark.parametrize("backend", BACKENDS)
def test_redirects_send_streams_to_files(tmp_path, backend):
    rc, out, _ = launch("streams.py", nproc=2, backend=backend,
                        launcher_args=["--standalone", "--log-dir", str(tmp_path), "--redirects", "3"])
    assert rc == 0, out
    assert "OUT from rank" not in out and "ERR from rank" not in out, out
    for lr in (0, 1):
        assert _logs(tmp_path, lr, "stdout.log") == f"OUT from rank {lr} of 2\n"
        assert _logs(tmp_path, lr, "stderr.log") == f"ERR from rank {lr}\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_tee_per_rank_spec(tmp_path, backend):
    rc, out, _ = launch("streams.py", nproc=2, backend=backend,
                        launcher_args=["--log-dir", str(tmp_path), "--tee", "0:1,1:2", "-r", "1:1"])
    assert rc == 0, out
    assert "OUT from rank 0 of 2" in out and "ERR from rank 0" in out        # rank 0: tee stdout
    assert "OUT from rank 1 of 2" not in out and "ERR from rank 1" in out    # rank 1: stdout redirected
    assert _logs(tmp_path, 0, "stdout.log") == "OUT from rank 0 of 2\n"
    assert _logs(tmp_path, 1, "stdout.log") == "OUT from rank 1 of 2\n"
    assert _logs(tmp_path, 1, "stderr.log") == "ERR from rank 1\n"
    assert not glob.glob(os.path.join(str(tmp_path), "*", "attempt_0", "0", "stderr.log"))


def test_without_log_options_output_is_unchanged():
    rc, out, _ = launch("streams.py", nproc=2, backend="none")
    assert rc == 0 and out.count("OUT from rank") == 2 and out.count("ERR from rank") == 2, out


def test_parse_nproc_and_standalone(monkeypatch):
    a = parse_args(["--nproc-per-node", "cpu", "x.py"])
    assert a.nproc_per_node == (os.cpu_count() or 1)
    a = parse_args(["--nproc_per_node", "auto", "--backend", "mpi", "x.py"])
    assert a.nproc_per_node >= 1
    a = parse_args(["--standalone", "--master-port", "1234", "--nproc-per-node", "3", "x.py", "--lr", "1"])
    assert a.nproc_per_node == 3 and a.master_addr == "127.0.0.1" and a.master_port != 1234
    assert a.script_args == ["--lr", "1"]
    import tinytorch
    if not tinytorch.cuda.is_available():
        with pytest.raises(SystemExit):
            parse_args(["--nproc-per-node", "gpu", "x.py"])
    for bad in (["--nproc-per-node", "many", "x.py"], ["--redirects", "5", "x.py"], ["--tee", "a:b", "x.py"],
                ["--standalone", "--nnodes", "2", "x.py"]):
        with pytest.raises(SystemExit):
            parse_args(bad)


def _refused(capsys, argv) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


@pytest.mark.skipif(HAVE_CUDA, reason="checks the message on a machine without GPUs")
def test_nccl_without_gpus_is_refused_before_any_worker_starts(capsys):
    err = _refused(capsys, ["--nproc-per-node", "2", "--backend", "nccl", os.path.abspath(__file__)])
    assert "--backend nccl needs CUDA GPUs" in err and "--backend mpi" in err, err


def test_a_missing_script_is_refused_before_any_worker_starts(capsys, tmp_path):
    missing = str(tmp_path / "no_such_script.py")
    err = _refused(capsys, ["--nproc-per-node", "2", "--backend", "mpi", missing])
    assert "can't open the script" in err and missing in err, err
    assert "no module named 'no_such_module_xyz'" in _refused(capsys, ["-m", "no_such_module_xyz"])
    assert "is not an executable" in _refused(capsys, ["--no-python", str(tmp_path / "nothing")])
