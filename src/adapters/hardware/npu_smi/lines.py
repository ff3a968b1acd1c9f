"""Numbered lines of one npu-smi reply, and the error that names the command and the line.

Every parser reports a problem the same way (command, line number, the line itself) so an
operator can find the offending line in a capture of the same command.
"""

import attrs

from npu_dra.adapters.hardware.errors import ProbeError

WARNING_PREFIX = "[WARNING]"


@attrs.frozen
class Line:
    number: int  # 1-based, as an editor shows it
    text: str


def numbered(output: str) -> tuple[Line, ...]:
    return tuple(Line(n, text.rstrip()) for n, text in enumerate(output.splitlines(), 1))


def is_noise(line: Line) -> bool:
    """Blank lines and npu-smi's own `[WARNING]...` lines carry no data in any layout."""
    text = line.text.strip()
    return not text or text.startswith(WARNING_PREFIX)


def bad_line(command: str, line: Line, reason: str) -> ProbeError:
    return ProbeError(f"`{command}` line {line.number}: {reason}: {line.text.strip()!r}")


def bad_output(command: str, reason: str) -> ProbeError:
    return ProbeError(f"`{command}`: {reason}")


def parse_int(command: str, line: Line, text: str, what: str) -> int:
    """A non-negative decimal integer, or a ProbeError naming `what` and the line."""
    if not text.isascii() or not text.isdigit():
        raise bad_line(command, line, f"{what} {text!r} is not a number")
    return int(text)
