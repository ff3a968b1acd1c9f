"""`npu-dra --version`: the version and the commit it was built from (app/version.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from npu_dra.app.cli import main
from npu_dra.app.version import COMMIT_ENV, checkout_head

REPO = Path(__file__).resolve().parents[3]


def version_line(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    return capsys.readouterr().out.strip()


def test_an_image_prints_the_commit_it_was_built_from(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMMIT_ENV, "0123456789ab")
    assert re.fullmatch(r"npu-dra \d+\.\d+\.\d+ \(commit 0123456789ab\)", version_line(capsys))


def test_a_checkout_prints_its_head(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(COMMIT_ENV, raising=False)
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert version_line(capsys).endswith(f"(commit {head})")


def test_outside_a_checkout_there_is_no_head(tmp_path: Path) -> None:
    assert checkout_head(tmp_path) is None
    (tmp_path / ".git").mkdir()  # not a repository git can read
    assert checkout_head(tmp_path) is None
