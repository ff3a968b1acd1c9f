"""One API per node: while one API's plugin runs, the other's refuses to start and names it;
two instances of one API may overlap (a seamless upgrade); a killed plugin blocks nothing."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from npu_dra.adapters.api_lock import ApiConflict, ApiLock


def test_the_other_api_is_refused_and_named(tmp_path: Path) -> None:
    dra = ApiLock(tmp_path, "dra", "node n1, pod 1234")
    dra.acquire()
    try:
        with pytest.raises(ApiConflict) as refused:
            ApiLock(tmp_path, "device-plugin", "node n1, pod -").acquire()
    finally:
        dra.release()
    assert "the DRA kubelet plugin serves this node's NPUs" in str(refused.value)
    assert "node n1, pod 1234, pid" in str(refused.value)
    classic = ApiLock(tmp_path, "device-plugin", "node n1, pod -")
    classic.acquire()  # once the DRA plugin is gone
    with pytest.raises(ApiConflict, match="the classic device plugin serves"):
        ApiLock(tmp_path, "dra", "node n1, pod 5678").acquire()
    classic.release()


def test_two_instances_of_one_api_overlap(tmp_path: Path) -> None:
    old, new = ApiLock(tmp_path, "dra", "old"), ApiLock(tmp_path, "dra", "new")
    old.acquire()
    new.acquire()
    assert (tmp_path / "npu-dra.owner").read_text().startswith("new, pid")
    with pytest.raises(ApiConflict):
        ApiLock(tmp_path, "device-plugin", "x").acquire()
    old.release()
    new.release()


HOLDER = """
import sys, time
from pathlib import Path
from npu_dra.adapters.api_lock import ApiLock
ApiLock(Path(sys.argv[1]), "device-plugin", "killed").acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_plugin_killed_with_sigkill_leaves_nothing_held(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ApiConflict, match="killed, pid"):
            ApiLock(tmp_path, "dra", "new").acquire()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    lock = ApiLock(tmp_path, "dra", "new")
    lock.acquire()  # the kernel dropped the dead process's lock
    lock.release()


def test_a_bad_directory_names_the_flag(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ApiConflict, match="--api-lock-dir"):
        ApiLock(tmp_path / "file" / "below", "dra", "x").acquire()


def test_an_unknown_api_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dra, device-plugin"):
        ApiLock(tmp_path, "grpc", "x")


def test_each_device_profile_has_its_own_locks(tmp_path: Path) -> None:
    """This project's GPU DRA plugin does not compete with its Ascend device plugin."""
    gpu = ApiLock(tmp_path, "dra", "gpu node", profile="gpu")
    gpu.acquire()
    classic = ApiLock(tmp_path, "device-plugin", "npu node")
    classic.acquire()
    with pytest.raises(ApiConflict):
        ApiLock(tmp_path, "dra", "npu dra").acquire()
    classic.release()
    gpu.release()
