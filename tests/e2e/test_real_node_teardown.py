"""A real node's containers and shims do not outlive a test process killed with SIGKILL: the
reaper (tests/support/node_teardown.py) removes them, unmounts what the node mounted and lets
the next run start. Here the node runs containerd and one container (no kubelet is needed to
leave a shim behind) in a child process, which is then killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.controlplane import wait_for
from tests.support.node_teardown import NodeLayout, mounts_under

REPO = Path(__file__).resolve().parents[2]
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tests.support.node import RealNode, SEED_IMAGE
    node = RealNode(None, k8s_bin=Path("/nonexistent"), node_bin=Path(sys.argv[1]),
                    name="teardown", work_dir=Path(sys.argv[2]), images_dir=Path(sys.argv[3]))
    node.start_runtime()
    # --runc-root: what the CRI runtime's options give the node's pods (ctr has its own default)
    node.ctr("run", "-d", f"--runc-root={node.runc_root}", SEED_IMAGE, "sleeper", "sleep", "3600")
    print("ready", flush=True)
    time.sleep(3600)
    """
)


def shims(address: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "containerd-shim-runc-v2" in argv and address in argv:
                found.append(int(entry.name))
    return found


def runc_containers(layout: NodeLayout) -> list[str]:
    root = Path(layout.runc_root)
    if not root.exists():
        return []
    listed = subprocess.run(
        [layout.runc_binary, "--root", str(root / "k8s.io"), "list", "-q"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return listed.stdout.split()


@pytest.mark.timeout(240)
def test_sigkill_of_the_test_process_leaves_no_container_shim_or_mount(
    real_node_bin_dir: Path, node_images: Path, tmp_path: Path
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(real_node_bin_dir), str(tmp_path), str(node_images)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "child.log").open("w"),
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        start_new_session=True,
    )
    assert child.stdout is not None
    try:
        ready = child.stdout.readline().strip()
        assert ready == "ready", (tmp_path / "child.log").read_text()
        layout = NodeLayout.from_json((tmp_path / "node-layout.json").read_text())
        assert shims(layout.containerd_address), "the container's shim should be running"
        assert runc_containers(layout) == ["sleeper"]
        assert mounts_under(layout.mount_roots)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the test process and its process group
        child.wait(timeout=30)
    wait_for(
        lambda: not shims(layout.containerd_address) and not mounts_under(layout.mount_roots),
        timeout=60,
        what="the reaper to remove the shim and the node's mounts",
    )
    assert runc_containers(layout) == []
    wait_for(
        lambda: not any(Path(d).exists() for d in layout.owned_dirs),
        timeout=30,
        what="the reaper to remove the node's directories",
    )
