"""deploy/RELEASES, checked without a node: it parses, its newest release is in this clone with
its tag (where the clone has it) agreeing, and each way it can disagree with a clone is an error
that says which (tests/e2e/real_node/test_release_upgrade_on_real_node.py builds from it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.releases import Release, ReleaseError, check, latest, recorded


def test_the_newest_recorded_release_is_in_this_clone_as_tagged() -> None:
    release = latest()
    assert recorded()[0] == Release("v0.1.0", "df94798b2b7bddb6816c52cf69cf283a3e44b2ad")
    assert release.image == f"docker.io/library/npu-dra:{release.tag}"


def test_a_line_that_is_not_a_tag_and_a_commit_is_named(tmp_path: Path) -> None:
    listed = tmp_path / "RELEASES"
    listed.write_text("# releases\nv0.1.0 df94798\n")
    with pytest.raises(ReleaseError, match=r"RELEASES:2: not '<tag> <40-hex commit>'"):
        recorded(listed)


def git(repo: Path, *argv: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *argv],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone with two commits, the first tagged v0.1.0."""
    git(tmp_path, "init", "-q")
    for message in ("first", "second"):
        git(tmp_path, "commit", "-q", "--allow-empty", "-m", message)
        if message == "first":
            git(tmp_path, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
    return tmp_path


def test_a_tag_on_another_commit_than_recorded_is_refused(repo: Path) -> None:
    assert check(Release("v0.1.0", git(repo, "rev-parse", "HEAD~1")), repo)
    with pytest.raises(ReleaseError, match=r"tag v0\.1\.0 points at .*, deploy/RELEASES records"):
        check(Release("v0.1.0", git(repo, "rev-parse", "HEAD")), repo)


def test_a_commit_missing_from_a_shallow_clone_says_so(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{repo}", str(shallow))
    with pytest.raises(ReleaseError, match=f"commit {first} of release v0.1.0 .* shallow clone"):
        check(Release("v0.1.0", first), shallow)
