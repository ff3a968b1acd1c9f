"""The Kubernetes CEL semver library's semantics, free of any CEL runtime.

Both evaluators share it, so `semver("1.2.3").isLessThan(...)` means the same in each. Build
metadata is parsed and dropped: Kubernetes compares and equates versions without it.
"""

import re

import attrs

_NUMBER = r"(0|[1-9]\d*)"
_IDENTIFIER = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_STRICT = re.compile(
    rf"^{_NUMBER}\.{_NUMBER}\.{_NUMBER}"
    rf"(?:-(?P<pre>{_IDENTIFIER}(?:\.{_IDENTIFIER})*))?"
    r"(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$"
)
_LOOSE_CORE = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?P<rest>[-+].*)?$")
_UINT64_MAX = 2**64 - 1


@attrs.frozen
class Semver:
    """A version as Kubernetes compares it: equality ignores build metadata, as ordering does."""

    major: int
    minor: int
    patch: int
    prerelease: str = ""

    def compare(self, other: "Semver") -> int:
        left, right = self._key(), other._key()
        return (left > right) - (left < right)

    def _key(self) -> tuple[int, int, int, bool, tuple[tuple[int, int, str], ...]]:
        identifiers = tuple(_identifier_key(part) for part in self.prerelease.split(".") if part)
        return (self.major, self.minor, self.patch, not self.prerelease, identifiers)


def _identifier_key(part: str) -> tuple[int, int, str]:
    """Numeric identifiers sort numerically and before alphanumeric ones (semver 2.0 §11)."""
    return (0, int(part), "") if part.isdigit() else (1, 0, part)


def parse_semver(text: str, *, normalize: bool = False) -> Semver:
    """Parse strictly, or after normalizing: a leading `v`, `1.0` and `01.2.3` are accepted."""
    strict = _normalized(text) if normalize else text
    match = _STRICT.match(strict)
    if not match:
        raise ValueError(f"{text!r} is not a semantic version")
    major, minor, patch = (int(match[group]) for group in (1, 2, 3))
    if max(major, minor, patch) > _UINT64_MAX:
        raise ValueError(f"{text!r}: version number out of range")
    return Semver(major, minor, patch, match["pre"] or "")


def is_semver(text: str, *, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except ValueError:
        return False
    return True


def _normalized(text: str) -> str:
    match = _LOOSE_CORE.match(text)
    if not match:
        return text
    numbers = (str(int(part or "0")) for part in match.group(1, 2, 3))
    return ".".join(numbers) + (match["rest"] or "")
