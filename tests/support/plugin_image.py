"""The npu-dra image, built from the Dockerfile's contents without Docker or a registry.

The Dockerfile installs the project's wheels into a slim Debian image with Python 3.11. Here the
same happens in steps this machine can do: a Debian bookworm rootfs with python3 and pip from the
distribution (`mmdebstrap`, cached outside the repository by its package list), every dependency
and the project as wheels (`pip wheel`, as the Dockerfile's first stage), installed into the rootfs
with the rootfs's own pip, and written as a docker archive with the Dockerfile's entrypoint.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from tests.support.oci_image import ImageConfig, layer_from_directory, write_docker_archive

REPO = Path(__file__).resolve().parents[2]
TAG = "docker.io/library/npu-dra:0.1.0"  # deploy/manifests' image, normalised as CRI does
SUITE = "bookworm"  # Debian 12: python3 is 3.11, as in the Dockerfile's base image
PACKAGES = ("python3", "python3-pip")
EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*")


class ImageBuildError(RuntimeError):
    """A step of the image build failed; the message names it and carries its output."""


def _run(argv: list[str], what: str, timeout: float = 1200.0) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise ImageBuildError(f"{what} failed ({' '.join(argv[:3])} ...):\n{result.stderr[-3000:]}")


def debian_rootfs(cache: Path) -> Path:
    """The Debian rootfs tarball (mmdebstrap), made once per package list."""
    key = hashlib.sha256(" ".join((SUITE, *PACKAGES, *EXCLUDES)).encode()).hexdigest()[:12]
    tarball = cache / f"debian-{SUITE}-python3-{key}.tar"
    if tarball.exists():
        return tarball
    if shutil.which("mmdebstrap") is None:
        raise ImageBuildError(
            "mmdebstrap is not installed (Debian: apt-get install mmdebstrap; "
            "tests/e2e/node/build.sh does)"
        )
    cache.mkdir(parents=True, exist_ok=True)
    temporary = tarball.with_name(tarball.name + ".tmp")
    excludes = [f"--dpkgopt=path-exclude={pattern}" for pattern in EXCLUDES]
    _run(
        [
            "mmdebstrap",
            "--format=tar",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            *excludes,
            SUITE,
            str(temporary),
        ],
        "mmdebstrap (the image's Debian rootfs)",
    )
    temporary.rename(tarball)
    return tarball


def project_wheels(directory: Path) -> Path:
    """The project and every dependency as wheels, as the Dockerfile's `wheels` stage makes."""
    shutil.rmtree(directory, ignore_errors=True)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(directory), str(REPO)],
        "pip wheel (the project and its dependencies)",
    )
    return directory


def build_plugin_image(cache: Path, archive: Path) -> Path:
    """Writes the image to `archive` (docker save format, tag TAG) and returns it."""
    base = debian_rootfs(cache)
    work = Path(tempfile.mkdtemp(prefix="npu-dra-image-", dir=cache))
    try:
        rootfs = work / "rootfs"
        rootfs.mkdir()
        with tarfile.open(base) as tar:
            tar.extractall(rootfs, numeric_owner=True, filter="fully_trusted")
        wheels = project_wheels(rootfs / "tmp" / "wheels")
        _run(
            [
                "chroot",
                str(rootfs),
                "python3",
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-index",
                "--no-cache-dir",  # and byte-compiled, as the Dockerfile's pip install does
                "--break-system-packages",
                "--find-links=/tmp/wheels",
                "npu-dra",
            ],
            "pip install in the image's rootfs",
        )
        shutil.rmtree(wheels)
        config = ImageConfig(
            entrypoint=["npu-dra"],
            cmd=["--help"],
            env={
                "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "PYTHONUNBUFFERED": "1",
                "PYTHONDONTWRITEBYTECODE": "1",
            },
        )
        write_docker_archive(archive, tag=TAG, layer=layer_from_directory(rootfs), config=config)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return archive
