"""What npu-smi prints, read up to a bound and by a deadline.

npu-smi's largest recorded answer is 7.6 kB in 75 lines (`npu-smi info` of a 16-chip A3,
tests/fixtures/npu-smi); reading whatever a broken or hostile npu-smi prints would let one
answer take gigabytes (20 M short lines cost 2.4 GB once parsed into lines). So stdout is read
only up to MAX_OUTPUT_BYTES and MAX_OUTPUT_LINES (hundreds of times any real answer), and of
stderr, which only feeds an error's first line, the first STDERR_BYTES are kept and the rest
read and dropped. Both pipes are read together: a child blocked writing a full stderr pipe
would otherwise never finish its stdout.
"""

import os
import selectors
import subprocess
import time

import attrs

MAX_OUTPUT_BYTES = 4 * 2**20
MAX_OUTPUT_LINES = 10_000
STDERR_BYTES = 64 * 2**10
_CHUNK = 64 * 2**10


class OutputTooLarge(Exception):
    """stdout passed MAX_OUTPUT_BYTES or MAX_OUTPUT_LINES; the message says which."""


@attrs.frozen
class Output:
    stdout: bytes
    stderr: bytes


def read_bounded(process: "subprocess.Popen[bytes]", *, deadline: float) -> Output | None:
    """stdout and stderr until both close; None once `deadline` (time.monotonic) passes first.
    OutputTooLarge as soon as stdout is over a bound: the caller kills the process."""
    assert process.stdout is not None
    assert process.stderr is not None
    stdout, stderr = _Stdout(), bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in selector.select(remaining):
                data = os.read(key.fd, _CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    stdout.add(data)
                else:
                    stderr += data[: max(STDERR_BYTES - len(stderr), 0)]
    return Output(bytes(stdout.data), bytes(stderr))


class _Stdout:
    def __init__(self) -> None:
        self.data = bytearray()
        self._lines = 0

    def add(self, data: bytes) -> None:
        self.data += data
        self._lines += data.count(b"\n")
        if len(self.data) > MAX_OUTPUT_BYTES:
            raise OutputTooLarge(f"more than {MAX_OUTPUT_BYTES // 2**20} MiB of output")
        if self._lines > MAX_OUTPUT_LINES:
            raise OutputTooLarge(f"more than {MAX_OUTPUT_LINES} lines of output")
