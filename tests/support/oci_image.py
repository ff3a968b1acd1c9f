"""Container images built on this machine, since no registry is reachable from it.

An image is one layer made from a directory (a busybox userland, a Debian rootfs, a static
binary) written as a `docker save` archive, which `ctr images import` reads with its tag. Layers
are reproducible: entries sorted, owners root, times zero, so the same inputs give the same image
id and a cached archive can be reused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class ImageConfig:
    entrypoint: Sequence[str] = ()
    cmd: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    working_dir: str = "/"


def _reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    return info


def layer_from_directory(root: Path) -> bytes:
    """An uncompressed tar of `root`'s contents (paths relative to it), reproducible."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            base = Path(dirpath)
            for name in [*sorted(dirnames), *sorted(filenames)]:
                path = base / name
                arcname = str(path.relative_to(root))
                info = _reset(tar.gettarinfo(str(path), arcname))
                if info.isreg():
                    with path.open("rb") as handle:
                        tar.addfile(info, handle)
                else:
                    tar.addfile(info)
            # os.walk does not descend into symlinked directories; tar keeps them as links.
    return buffer.getvalue()


def write_docker_archive(archive: Path, *, tag: str, layer: bytes, config: ImageConfig) -> str:
    """Writes `archive` (docker save format) holding one image `tag`; returns its image id."""
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Entrypoint": list(config.entrypoint) or None,
            "Cmd": list(config.cmd) or None,
            "Env": [f"{k}={v}" for k, v in config.env.items()],
            "WorkingDir": config.working_dir,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "npu-dra e2e: tests/support/oci_image.py"}],
    }
    config_bytes = json.dumps(image_config, sort_keys=True).encode()
    image_id = hashlib.sha256(config_bytes).hexdigest()
    manifest = [
        {
            "Config": f"{image_id}.json",
            "RepoTags": [tag],
            "Layers": [f"{diff_id.split(':')[1]}/layer.tar"],
        }
    ]
    archive.parent.mkdir(parents=True, exist_ok=True)
    temporary = archive.with_name(archive.name + ".tmp")
    with tarfile.open(temporary, mode="w") as tar:
        for name, data in (
            (f"{image_id}.json", config_bytes),
            (f"{diff_id.split(':')[1]}/layer.tar", layer),
            ("manifest.json", json.dumps(manifest).encode()),
        ):
            info = _reset(tarfile.TarInfo(name))
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    os.replace(temporary, archive)
    return image_id


def busybox_rootfs(root: Path, busybox: Path = Path("/bin/busybox")) -> Path:
    """A minimal userland: a static busybox with a link per applet, /etc/passwd, empty /tmp."""
    if not busybox.exists():
        raise FileNotFoundError(
            f"{busybox} is missing: install the static busybox (Debian: apt-get install "
            "busybox-static); tests/e2e/node/build.sh does"
        )
    for directory in ("bin", "etc", "tmp", "proc", "sys", "dev", "usr/local/bin", "root"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    shutil.copy2(busybox, root / "bin" / "busybox")
    applets = subprocess.run(
        [str(busybox), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    for applet in applets:
        link = root / "bin" / applet
        if applet != "busybox" and not link.exists():
            link.symlink_to("busybox")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    (root / "tmp").chmod(0o1777)
    return root
