"""`make release`: this tree's release artifacts under build/release/<version>/.

- npu-dra-<version>-amd64.oci.tar and -arm64.oci.tar: the Dockerfile built by the project's image
  builder (tests/support/plugin_image.py: buildah, no daemon, on its local Debian 12 base, the
  arm64 one under qemu-user), with COMMIT set so `npu-dra --version` names the commit, written as
  OCI archives tagged npu-dra:<version> (`skopeo copy oci-archive:... docker://<registry>/...`
  or `podman load` publishes them);
- npu-dra-<version>.tgz: the chart, packaged by helm (tests/deploy/helm/build.sh's);
- npu-dra-<version>.cdx.json: a CycloneDX SBOM of the Python packages installed in the image
  (`pip freeze` run in the amd64 image, given to cyclonedx-py, CycloneDX's maintained Python
  generator); the base image's Debian packages are not in it;
- SHA256SUMS: the checksum of each, as `sha256sum -c` reads it.

A tree with uncommitted changes is refused: a release is a commit.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from tests.deploy.helm_cli import CHART, build_helm
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import ARCHITECTURES, _run, build_image, buildah, run_in_image
from tests.support.version import REPO, VERSION


def git(*argv: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *argv], capture_output=True, text=True, check=True
    ).stdout.strip()


def commit_of_clean_tree() -> str:
    if git("status", "--porcelain", "--untracked-files=no"):
        raise SystemExit("make release: the tree has uncommitted changes; commit them first")
    return git("rev-parse", "--short=12", "HEAD")


def images(out: Path, commit: str) -> list[Path]:
    archives = []
    for arch in ARCHITECTURES:
        name = f"localhost/npu-dra-release:{VERSION}-{arch}"
        image = build_image(IMAGES_CACHE, arch, name=name, commit=commit)
        archive = out / f"npu-dra-{VERSION}-{arch}.oci.tar"
        archive.unlink(missing_ok=True)
        _run(
            [*buildah(IMAGES_CACHE), "push", "--quiet", image,
             f"oci-archive:{archive}:npu-dra:{VERSION}"],
            f"buildah push ({arch}, OCI archive)",
        )  # fmt: skip
        archives.append(archive)
    return archives


def chart(out: Path) -> Path:
    helm = build_helm(lambda line: print(line, file=sys.stderr))
    if isinstance(helm, str):
        raise SystemExit(f"make release: {helm}")
    _run([str(helm), "package", str(CHART), "--destination", str(out)], "helm package")
    return out / f"npu-dra-{VERSION}.tgz"


def sbom(out: Path) -> Path:
    image = f"localhost/npu-dra-release:{VERSION}-amd64"
    freeze = "python3 -m pip freeze --all --disable-pip-version-check"
    frozen = run_in_image(IMAGES_CACHE, image, freeze)
    requirements = out / "image-requirements.txt"
    requirements.write_text(frozen)
    target = out / f"npu-dra-{VERSION}.cdx.json"
    tool = shutil.which("cyclonedx-py", path=str(Path(sys.executable).parent))
    if tool is None:
        raise SystemExit("make release: cyclonedx-py is missing (pip install cyclonedx-bom)")
    _run(
        [tool, "requirements", str(requirements), "--output-format", "JSON",
         "--output-file", str(target)],
        "cyclonedx-py requirements",
    )  # fmt: skip
    requirements.unlink()
    return target


def checksums(out: Path, files: list[Path]) -> Path:
    lines = [f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}" for path in files]
    target = out / "SHA256SUMS"
    target.write_text("\n".join(lines) + "\n")
    return target


def size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.1f} kB"


def main() -> int:
    commit = commit_of_clean_tree()
    out = REPO / "build" / "release" / VERSION
    out.mkdir(parents=True, exist_ok=True)
    files = [*images(out, commit), chart(out)]
    files.append(sbom(out))
    checksums(out, files)
    for path in [*files, out / "SHA256SUMS"]:
        print(f"{path.relative_to(REPO)}  {size(path.stat().st_size)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
