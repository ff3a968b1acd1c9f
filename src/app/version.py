"""What `npu-dra --version` prints: the installed distribution's version and the commit it was
built from, so an operator can say exactly what a node runs (the image tag alone may be reused).

The commit is `NPU_DRA_COMMIT` (the Dockerfile's `COMMIT` build argument, which `make release`
sets), else, where the package runs from a git checkout (an editable install), that checkout's
HEAD, else `unknown`.
"""

import os
import subprocess
from pathlib import Path

DISTRIBUTION = "npu-dra"
COMMIT_ENV = "NPU_DRA_COMMIT"
GIT_TIMEOUT_S = 2.0


def version_text() -> str:
    """`npu-dra <version> (commit <id>)`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version(DISTRIBUTION)
    except PackageNotFoundError:
        number = "unknown (not installed)"
    return f"npu-dra {number} (commit {commit()})"


def commit() -> str:
    given = os.environ.get(COMMIT_ENV, "").strip()
    if given and given != "unknown":
        return given
    return checkout_head(Path(__file__).resolve().parents[2]) or "unknown"


def checkout_head(root: Path) -> str | None:
    """The short commit id of the git checkout at `root`; None where it is none (or git is
    missing, or does not answer within GIT_TIMEOUT_S)."""
    if not (root / ".git").exists():
        return None
    try:
        result = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    head = result.stdout.strip()
    return head if result.returncode == 0 and head else None
