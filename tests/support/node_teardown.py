"""Tearing a real node down to nothing: the kubelet, containerd, every container and its shim,
every mount under the node's directories, the network namespaces it made.

`teardown(layout)` is idempotent and runs twice: from `RealNode.stop`, and from a reaper process
(`python -m tests.support.node_teardown`) that the node starts in its own session and that waits
for the test process to close a pipe. The kernel closes that pipe when the test process dies, even
of SIGKILL, so containers and shims (which containerd deliberately detaches from itself) never
outlive the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

OWNER_MARKER = ".npu-dra-e2e"  # a directory the node made and may delete


@dataclass(frozen=True)
class NodeLayout:
    """What a node made, in plain data (the reaper receives it as JSON)."""

    containerd_address: str
    runc_root: str
    runc_binary: str
    mount_roots: tuple[str, ...]  # every mount under these is the node's
    netns_dir: str
    netns_before: tuple[str, ...]  # network namespaces that existed before the node started
    pids: tuple[int, ...] = ()  # kubelet, containerd (process-group leaders)
    owned_dirs: tuple[str, ...] = ()  # removed once unmounted, if they carry OWNER_MARKER

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> NodeLayout:
        data = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


def teardown(layout: NodeLayout) -> list[str]:
    """Stops everything the node made; returns what it could not undo (empty when all went)."""
    problems: list[str] = []
    for pid in layout.pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    problems += _delete_containers(layout)
    _kill_shims(layout.containerd_address)
    problems += _unmount_under(layout.mount_roots)
    problems += _remove_new_netns(layout)
    if not problems:
        for directory in map(Path, layout.owned_dirs):
            if (directory / OWNER_MARKER).exists():
                shutil.rmtree(directory, ignore_errors=True)
    return problems


def _delete_containers(layout: NodeLayout) -> list[str]:
    root = Path(layout.runc_root)
    if not root.is_dir():
        return []
    problems = []
    for namespace_root in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
        listed = subprocess.run(
            [layout.runc_binary, "--root", str(namespace_root), "list", "-q"],
            capture_output=True,
            text=True,
            check=False,
        )
        for container in listed.stdout.split():
            result = subprocess.run(
                [layout.runc_binary, "--root", str(namespace_root), "delete", "--force", container],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0 and "does not exist" not in result.stderr:
                problems.append(f"runc delete {container}: {result.stderr.strip()}")
    return problems


def _kill_shims(address: str) -> None:
    for pid in _pids_with_args(("containerd-shim-runc-v2", address)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _pids_with_args(needles: tuple[str, ...]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        joined = " ".join(argv)
        if all(needle in joined for needle in needles):
            pids.append(int(entry.name))
    return pids


def mounts_under(roots: tuple[str, ...]) -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if any(point == root or point.startswith(root.rstrip("/") + "/") for root in roots):
            points.append(point)
    return points


def _unmount_under(roots: tuple[str, ...]) -> list[str]:
    problems = []
    for _attempt in range(3):
        points = sorted(set(mounts_under(roots)), key=lambda p: p.count("/"), reverse=True)
        if not points:
            return []
        for point in points:
            result = subprocess.run(
                ["umount", "-l", point], capture_output=True, text=True, check=False
            )
            if result.returncode != 0 and "not mounted" not in result.stderr:
                problems.append(f"umount {point}: {result.stderr.strip()}")
        time.sleep(0.2)
    return problems + [f"still mounted: {p}" for p in mounts_under(roots)]


def _remove_new_netns(layout: NodeLayout) -> list[str]:
    directory = Path(layout.netns_dir)
    if not directory.is_dir():
        return []
    problems = []
    for entry in directory.iterdir():
        if entry.name in layout.netns_before or not entry.name.startswith("cni-"):
            continue
        subprocess.run(["umount", "-l", str(entry)], capture_output=True, check=False)
        try:
            entry.unlink()
        except OSError as error:
            problems.append(f"remove {entry}: {error}")
    return problems


def main() -> int:
    """The reaper: reads the layout from argv[1], waits for EOF on stdin, then tears down."""
    layout = NodeLayout.from_json(Path(sys.argv[1]).read_text())
    with contextlib.suppress(OSError):
        sys.stdin.buffer.read()  # returns when the test process closes the pipe or dies
    with contextlib.suppress(OSError):  # the pids change when the kubelet restarts
        layout = NodeLayout.from_json(Path(sys.argv[1]).read_text())
    for problem in teardown(layout):
        print(f"node teardown: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
