"""The real node's containerd configuration, in the format of the containerd it runs.

containerd 2.x reads config version 3, where the CRI's runtime and image settings are plugins of
their own and CDI is on by default. containerd 1.7 reads version 2: one CRI plugin
(`io.containerd.grpc.v1.cri`) holds everything, and CDI is off until `enable_cdi = true`
(containerd v1.7.35 pkg/cri/config/config_unix.go: `EnableCDI: false`, `CDISpecDirs: /etc/cdi,
/var/run/cdi`; the keys from pkg/cri/config/config.go).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ContainerdPaths:
    root: Path
    state: Path
    address: str
    cdi_root: Path
    pause_image: str
    runc: str
    runc_root: Path
    cni_bin_dir: Path
    cni_conf_dir: Path


def major_version(containerd: Path) -> int:
    """containerd's major version, from `containerd --version` (`containerd <pkg> v1.7.35 ...`)."""
    printed = subprocess.run(
        [str(containerd), "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    found = re.search(r"\sv?(\d+)\.\d+\.\d+", printed)
    if found is None:
        raise ValueError(f"no version in `containerd --version`: {printed!r}")
    return int(found.group(1))


def containerd_config(major: int, paths: ContainerdPaths) -> str:
    return _version_3(paths) if major >= 2 else _version_2(paths)


def _version_3(p: ContainerdPaths) -> str:
    runtime = 'plugins."io.containerd.cri.v1.runtime"'
    return f"""\
version = 3
root = "{p.root}"
state = "{p.state}"

[grpc]
  address = "{p.address}"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "{p.pause_image}"

[{runtime}]
  enable_cdi = true
  cdi_spec_dirs = ["{p.cdi_root}"]
  # This machine's processes lack CAP_SYS_RESOURCE: runc cannot set the negative oom_score_adj
  # the CRI gives sandboxes ("can't get final child's PID from pipe: EOF") unless restricted.
  restrict_oom_score_adj = true
  [{runtime}.containerd]
    default_runtime_name = "runc"
    [{runtime}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{runtime}.containerd.runtimes.runc.options]
        BinaryName = "{p.runc}"
        Root = "{p.runc_root}"
        SystemdCgroup = false
  [{runtime}.cni]
    bin_dirs = ["{p.cni_bin_dir}"]
    conf_dir = "{p.cni_conf_dir}"

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
"""


def _version_2(p: ContainerdPaths) -> str:
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return f"""\
version = 2
root = "{p.root}"
state = "{p.state}"

[grpc]
  address = "{p.address}"

[{cri}]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  sandbox_image = "{p.pause_image}"
  # Off by default in 1.7: without it the claims' CDI devices never reach the container.
  enable_cdi = true
  cdi_spec_dirs = ["{p.cdi_root}"]
  restrict_oom_score_adj = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        BinaryName = "{p.runc}"
        Root = "{p.runc_root}"
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "{p.cni_bin_dir}"
    conf_dir = "{p.cni_conf_dir}"
"""
