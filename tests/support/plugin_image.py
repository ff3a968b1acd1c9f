"""The npu-dra image, built from the repository's Dockerfile by a real OCI image builder, with no
daemon and no registry: buildah (Debian's package; `--isolation chroot`, the vfs storage driver,
its storage cached outside the repository).

No registry is reachable, so the Dockerfile's base (python:3.11-slim) is replaced by a local one
passed as `--build-arg BASE`: a Debian bookworm rootfs with python3 (3.11) and python3-pip from
`mmdebstrap`, cached by architecture and package list. The Dockerfile's `pip wheel` reaches PyPI
through this machine's TLS proxy, so the host's CA bundle is mounted over the base's for its
RUN steps (`--volume`; nothing of it stays in the image), as behind any corporate proxy.

An image is keyed by a digest of what goes into it (the Dockerfile, the files .dockerignore lets
through, the architecture and the base): built again only when that changes, one build at a
time per cache (a file lock: `make test`'s background build and a test may ask together).

Images are built for linux/amd64 and linux/arm64 (Kunpeng). The arm64 one's RUN steps, and any
command run in it here, go through qemu-user emulation (qemu-user-static, registered with
binfmt_misc, which is mounted when it is not). The amd64 image goes to the real node as a docker
archive (`ctr images import`) under the manifests' tag; a release's image is built the same way
from its own exported tree (tests/support/releases.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.support.version import IMAGE, VERSION

REPO = Path(__file__).resolve().parents[2]
TAG = f"docker.io/library/{IMAGE}"  # deploy/manifests' image, normalised as CRI does
SUITE = "bookworm"  # Debian 12: python3 is 3.11, as in the Dockerfile's base image
PACKAGES = ("python3", "python3-pip")
EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*")
ARCHITECTURES = ("amd64", "arm64")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
BINFMT = Path("/proc/sys/fs/binfmt_misc")


class ImageBuildError(RuntimeError):
    """A step of the image build failed; the message names it and carries its output."""


def _run(argv: list[str], what: str, timeout: float = 1800.0) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise ImageBuildError(f"{what} failed ({' '.join(argv[:4])} ...):\n{result.stderr[-3000:]}")
    return result.stdout


def buildah(cache: Path) -> list[str]:
    """buildah with its storage under `cache` (vfs: no overlay mount needed)."""
    if shutil.which("buildah") is None:
        raise ImageBuildError(
            "buildah is not installed "
            "(Debian: apt-get install buildah; tests/e2e/node/build.sh does)"
        )
    storage = cache / "buildah"
    return [
        "buildah", "--storage-driver=vfs",
        f"--root={storage / 'storage'}", f"--runroot={storage / 'run'}",
    ]  # fmt: skip


def ensure_emulation(arch: str) -> None:
    """Foreign binaries run through qemu: binfmt_misc mounted and qemu's handler enabled."""
    if arch == "amd64":
        return
    if not (BINFMT / "register").exists():
        _run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)], "mounting binfmt_misc")
    if not (BINFMT / "qemu-aarch64").exists():
        _run(["update-binfmts", "--enable", "qemu-aarch64"], "enabling qemu-aarch64 (binfmt)")


def debian_rootfs(cache: Path, arch: str = "amd64") -> Path:
    """The base's Debian rootfs tarball (mmdebstrap), once per architecture and package list."""
    key = hashlib.sha256(" ".join((SUITE, arch, *PACKAGES, *EXCLUDES)).encode()).hexdigest()[:12]
    tarball = cache / f"debian-{SUITE}-{arch}-python3-{key}.tar"
    if tarball.exists():
        return tarball
    if shutil.which("mmdebstrap") is None:
        raise ImageBuildError(
            "mmdebstrap is not installed (Debian: apt-get install mmdebstrap; "
            "tests/e2e/node/build.sh does)"
        )
    ensure_emulation(arch)
    cache.mkdir(parents=True, exist_ok=True)
    temporary = tarball.with_name(tarball.name + ".tmp")
    excludes = [f"--dpkgopt=path-exclude={pattern}" for pattern in EXCLUDES]
    _run(
        [
            "mmdebstrap", "--format=tar", "--variant=minbase", f"--architectures={arch}",
            f"--include={','.join(PACKAGES)}", *excludes, SUITE, str(temporary),
        ],
        f"mmdebstrap (the {arch} base's Debian rootfs)",
    )  # fmt: skip
    temporary.rename(tarball)
    return tarball


def base_image(cache: Path, arch: str) -> str:
    """The local stand-in for python:3.11-slim in buildah's storage; its name."""
    rootfs = debian_rootfs(cache, arch)
    name = f"localhost/npu-dra-base:{SUITE}-{arch}-{rootfs.stem.rsplit('-', 1)[-1]}"
    tool = buildah(cache)
    if subprocess.run([*tool, "inspect", name], capture_output=True, check=False).returncode == 0:
        return name
    container = _run([*tool, "from", "--arch", arch, "scratch"], "buildah from scratch").strip()
    try:
        _run([*tool, "add", container, str(rootfs), "/"], "buildah add (the base rootfs)")
        path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        _run([*tool, "config", "--arch", arch, "--os", "linux", "--env", path, container], "config")
        _run([*tool, "commit", "-q", container, name], "buildah commit (the base)")
    finally:
        subprocess.run([*tool, "rm", container], capture_output=True, check=False)
    return name


def build_image(
    cache: Path,
    arch: str,
    *,
    context: Path = REPO,
    name: str | None = None,
    commit: str = "unknown",
) -> str:
    """The Dockerfile of `context` (the working tree, or a release's exported tree) built for
    linux/`arch` on the local base, unless the image of that name was built from the same
    inputs (`context_digest`); the image's name. `commit` is the Dockerfile's COMMIT (what
    `npu-dra --version` names; `make release` gives it, the tests leave it unknown)."""
    name = name or f"localhost/npu-dra:{VERSION}-{arch}"
    with build_lock(cache):
        ensure_emulation(arch)
        base = base_image(cache, arch)
        digest = context_digest(context, arch, base, commit)
        stamp = _stamp(cache, name)
        if _read(stamp) == digest and _exists(cache, name):
            return name
        _build(cache, arch, context, name, base, commit=commit)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    return name


def _build(cache: Path, arch: str, context: Path, name: str, base: str, *, commit: str) -> None:
    trust = [f"--volume={HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro"] if HOST_CA_BUNDLE.exists() else []
    _run(
        [
            *buildah(cache), "build", "--isolation=chroot", f"--platform=linux/{arch}", *trust,
            f"--build-arg=BASE={base}", f"--build-arg=COMMIT={commit}", f"--tag={name}",
            f"--file={context / 'Dockerfile'}",
            str(context),
        ],
        f"buildah build ({context / 'Dockerfile'}, linux/{arch})",
    )  # fmt: skip
    # The image this tag named before is now dangling: vfs keeps a whole copy of every layer
    # (about 1.4 GB an image), so each run would leave gigabytes behind. Tagged images stay.
    subprocess.run([*buildah(cache), "rmi", "--prune"], capture_output=True, check=False)


def context_digest(context: Path, arch: str, base: str, commit: str = "unknown") -> str:
    """What the image is made of: the Dockerfile and what .dockerignore lets through
    (pyproject.toml, README.md, src/ without __pycache__), the architecture, the base and the
    commit it names."""
    salt = f"{arch}\0{base}\0" if commit == "unknown" else f"{arch}\0{base}\0{commit}\0"
    digest = hashlib.sha256(salt.encode())
    files = [context / "Dockerfile", context / "pyproject.toml", context / "README.md"]
    files += sorted(
        path
        for path in (context / "src").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )
    for path in files:
        digest.update(f"{path.relative_to(context)}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def build_lock(cache: Path) -> Iterator[None]:
    """One image build at a time in `cache` (buildah's own locks do not stop a prune from
    removing what a second build is still using)."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _stamp(cache: Path, name: str) -> Path:
    return cache / "digests" / name.replace("/", "_").replace(":", "_")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _exists(cache: Path, name: str) -> bool:
    inspected = subprocess.run([*buildah(cache), "inspect", name], capture_output=True, check=False)
    return inspected.returncode == 0


def run_in_image(cache: Path, image: str, script: str) -> str:
    """`sh -c script` in a container of `image` (chroot isolation; qemu for arm64); stdout."""
    tool = buildah(cache)
    container = _run([*tool, "from", image], f"buildah from {image}").strip()
    try:
        return _run(
            [*tool, "run", "--isolation=chroot", container, "--", "sh", "-c", script],
            f"running {script!r} in {image}",
        )
    finally:
        subprocess.run([*tool, "rm", container], capture_output=True, check=False)


def image_size(cache: Path, image: str) -> str:
    """The image's size as buildah reports it (its layers, uncompressed), e.g. "450 MB"."""
    shown = _run([*buildah(cache), "images", "--format", "{{.Size}}", image], "buildah images")
    return shown.strip()


def build_plugin_image(cache: Path, archive: Path) -> Path:
    """The amd64 image written to `archive` (docker save format, tag TAG); returns it. The
    archive is written again only when the image was built from other inputs."""
    image = build_image(cache, "amd64")
    digest = _read(_stamp(cache, image))
    archive_stamp = archive.with_name(archive.name + ".digest")
    if archive.exists() and digest is not None and _read(archive_stamp) == digest:
        return archive
    save_archive(cache, image, archive, TAG)
    if digest is not None:
        archive_stamp.write_text(digest)
    return archive


def save_archive(cache: Path, image: str, archive: Path, tag: str) -> Path:
    """`image` written to `archive` in docker save format under `tag`, for `ctr images import`;
    the archive appears whole or not at all."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(archive.name + ".tmp")
    partial.unlink(missing_ok=True)
    _run(
        [*buildah(cache), "push", "--quiet", image, f"docker-archive:{partial}:{tag}"],
        "buildah push (docker archive for ctr import)",
    )
    os.chmod(partial, 0o644)
    partial.rename(archive)
    return archive
