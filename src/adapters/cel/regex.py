"""The Kubernetes CEL regex library (find, findAll) with Go's regexp semantics, on RE2.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/regex.go: `find` is Go's FindString (the
leftmost match, "" when none), `findAll` is FindAllString (a negative limit means no limit; an
empty match right after the previous match is dropped), and a pattern that Go's regexp does not
compile is an error, reported when the program is built if the pattern is a literal (see
literals.py). Go's regexp is RE2 syntax and semantics; Python's `re` is not (it
has lookaround, backreferences and `\\Z`, and other escapes), so this uses Google's RE2 binding
(`google-re2`). RE2 takes one escape Go refuses: `\\C`, any byte, which is refused here.
"""

import functools
from typing import Any

import re2  # type: ignore[import-untyped]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


def check_pattern(pattern: str) -> None:
    """Raise ValueError if Go's regexp would not compile `pattern` (the reason in RE2's words)."""
    _compiled(pattern)


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    if _has_byte_escape(pattern):
        raise ValueError("error parsing regexp: invalid escape sequence: `\\C`")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as error:
        reason = error.args[0].decode() if isinstance(error.args[0], bytes) else error.args[0]
        raise ValueError(f"error parsing regexp: {reason}") from error


def _has_byte_escape(pattern: str) -> bool:
    """Whether `\\C` occurs as an escape, outside a \\Q...\\E quotation."""
    index = 0
    while (index := pattern.find("\\", index)) >= 0:
        follower = pattern[index + 1 : index + 2]
        if follower == "C":
            return True
        if follower == "Q":
            end = pattern.find("\\E", index + 2)
            index = len(pattern) if end < 0 else end
        index += 2
    return False


def find(text: str, pattern: str) -> str:
    match = _compiled(pattern).search(text)
    return "" if match is None else str(match.group())


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Go's allMatches: successive matches, an empty one abutting the last match skipped."""
    regex = _compiled(pattern)
    limit = len(text) + 1 if limit < 0 else limit
    found: list[str] = []
    position, previous_end = 0, -1
    while len(found) < limit and position <= len(text):
        match = regex.search(text, position)
        if match is None:
            break
        start, end = match.span()
        accepted = end != position or start != previous_end
        position = position + 1 if end == position else end
        previous_end = end
        if accepted:
            found.append(text[start:end])
    return found
