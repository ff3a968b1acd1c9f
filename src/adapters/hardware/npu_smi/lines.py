"""Numbered lines of one npu-smi reply, and the error that names the command and the line.

Every parser reports a problem the same way (command, line number, the line itself) so an
operator can find the offending line in a capture of the same command. What an error quotes of
npu-smi's text is cut (`shown`, 200 characters): a 20 MiB line must not become a 20 MB log line.
"""

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.vnpu.templates import QUOTE_CHARS, shown

WARNING_PREFIX = "[WARNING]"
MAX_DIGITS = 18  # every number npu-smi prints fits in 64 bits; int() of 5000 digits raises


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


def clipped(text: str) -> str:
    """`text` as it is when short; else cut to its first QUOTE_CHARS, quoted, its length said."""
    return text if len(text) <= QUOTE_CHARS else shown(text)


def bad_line(command: str, line: Line, reason: str) -> ProbeError:
    return ProbeError(f"`{command}` line {line.number}: {reason}: {shown(line.text.strip())}")


def bad_output(command: str, reason: str) -> ProbeError:
    return ProbeError(f"`{command}`: {reason}")


def parse_int(command: str, line: Line, text: str, what: str) -> int:
    """A non-negative decimal integer, or a ProbeError naming `what` and the line."""
    if not text.isascii() or not text.isdigit():
        raise bad_line(command, line, f"{what} {shown(text)} is not a number")
    if len(text) > MAX_DIGITS:
        raise bad_line(command, line, f"{what} {shown(text)} has more than {MAX_DIGITS} digits")
    return int(text)
