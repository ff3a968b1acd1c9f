"""Released versions of npu-dra, as deploy/RELEASES records them, and their images.

An upgrade test needs the previous release exactly as it shipped: its chart and the image its
Dockerfile builds. Both come from the release's commit (`git archive`, so nothing of the working
tree leaks in); the commit id is recorded in a tracked file, so a moved or missing tag cannot
change what is tested, and a tag that disagrees with the file is an error. A release never
changes, so its image is built once and kept as a docker archive named by its commit id.
"""

from __future__ import annotations

import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.plugin_image import REPO, ImageBuildError, build_image, buildah, save_archive

RELEASES_FILE = REPO / "deploy" / "RELEASES"
LINE = re.compile(r"(v\d+\.\d+\.\d+) ([0-9a-f]{40})")
IMAGE_REPOSITORY = "docker.io/library/npu-dra"


class ReleaseError(RuntimeError):
    """deploy/RELEASES and the clone disagree, or the clone lacks a release's commit."""


@dataclass(frozen=True)
class Release:
    tag: str
    commit: str

    @property
    def image(self) -> str:
        """The release's image on a node, distinct from the working tree's."""
        return f"{IMAGE_REPOSITORY}:{self.tag}"


def recorded(path: Path = RELEASES_FILE) -> list[Release]:
    """Every release in `path`, oldest first; a line that is neither a comment nor
    `<tag> <commit>` is an error naming it."""
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.fullmatch(line.strip())
        if match is None:
            raise ReleaseError(f"{path}:{number}: not '<tag> <40-hex commit>': {line[:120]!r}")
        found.append(Release(match.group(1), match.group(2)))
    return found


def latest(path: Path = RELEASES_FILE, repo: Path = REPO) -> Release:
    """The newest recorded release, checked against the clone (see `check`)."""
    releases = recorded(path)
    if not releases:
        raise ReleaseError(f"{path} records no release")
    return check(releases[-1], repo)


def check(release: Release, repo: Path = REPO) -> Release:
    """The release's commit is in the clone and its tag, where the clone has it, names it."""
    if _git(repo, "cat-file", "-e", f"{release.commit}^{{commit}}").returncode != 0:
        shallow = _git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        raise ReleaseError(
            f"commit {release.commit} of release {release.tag} (deploy/RELEASES) is not in this "
            + ("shallow clone: run `git fetch --unshallow --tags`" if shallow else "clone")
            + "; the release upgrade test builds that release's image from it"
        )
    tagged = _git(repo, "rev-parse", "-q", "--verify", f"refs/tags/{release.tag}^{{commit}}")
    if tagged.returncode == 0 and tagged.stdout.strip() != release.commit:
        raise ReleaseError(
            f"tag {release.tag} points at {tagged.stdout.strip()}, deploy/RELEASES records "
            f"{release.commit}: a release's commit never changes; fix the tag or the file"
        )
    return release


def export_tree(release: Release, into: Path, repo: Path = REPO) -> Path:
    """The release's tracked files (`git archive`) under `into`; returns `into`."""
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as archive:
        made = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", release.commit],
            stdout=archive, stderr=subprocess.PIPE, timeout=120, check=False,
        )  # fmt: skip
        if made.returncode != 0:
            raise ReleaseError(f"git archive {release.commit}: {made.stderr.decode()[-2000:]}")
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(into, filter="data")
    return into


def release_image(cache: Path, release: Release) -> Path:
    """The release's amd64 image as a docker archive tagged `release.image`: built from its
    exported tree the first time, then kept under `cache`/releases by commit id."""
    archive = cache / "releases" / f"npu-dra-{release.commit}.tar"
    if archive.exists():
        return archive
    name = f"localhost/npu-dra:{release.tag}-amd64"
    with tempfile.TemporaryDirectory(prefix=f"npu-dra-{release.tag}-") as tree:
        build_image(cache, "amd64", context=export_tree(release, Path(tree)), name=name)
    try:
        return save_archive(cache, name, archive, release.image)
    finally:  # the archive is what is kept; buildah's vfs copy of it is only disk
        subprocess.run([*buildah(cache), "rmi", name], capture_output=True, check=False)


def _git(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *argv], capture_output=True, text=True, timeout=60, check=False
        )
    except FileNotFoundError as error:
        raise ImageBuildError("git is not installed; the release tests read its history") from error
