"""Runs npu-smi: an argument list (never a shell), a C locale, a deadline, and clear failures.

npu-smi is the one process discovery depends on, so every way it can fail (missing binary,
non-zero exit, a hang, more output than any npu-smi prints: bounded.py) becomes a ProbeError
naming the exact command. Independent commands run concurrently: discovery costs one npu-smi
round trip, not one per command.
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.bounded import OutputTooLarge, read_bounded
from npu_dra.adapters.hardware.npu_smi.lines import clipped

NO_CARD = "There is no NPU card on this server."
UNSUPPORTED = "does not support querying"
KNOWN_ANSWERS = (NO_CARD, UNSUPPORTED)

Command = tuple[str, ...]


def describe(args: Sequence[str]) -> str:
    """How errors name a command: as an operator would type it, whatever the binary's path."""
    return " ".join(("npu-smi", *args))


# Flags whose values are ids (card, chip, physical id, vNPU): left out of a command's label.
ID_FLAGS = frozenset({"-i", "-c", "-p", "-v"})
CommandDone = Callable[[str, float, bool], None]  # (label, seconds, succeeded)


def label(args: Sequence[str]) -> str:
    """`npu-smi info -t memory -i 3` -> `npu-smi info -t memory`: one series per kind of call."""
    kept: list[str] = []
    values = iter(args)
    for arg in values:
        if arg in ID_FLAGS:
            next(values, None)  # its id
            continue
        kept.append(arg)
    return describe(kept)


class NpuSmiRunner:
    """Runs one npu-smi binary; `run` returns stdout or raises ProbeError. `on_done`, if given,
    hears of every call: its label, seconds and whether it succeeded."""

    def __init__(self, *, path: Path, on_done: CommandDone | None = None) -> None:
        self.path = path
        self._on_done = on_done

    def run(self, args: Command, *, timeout: float, answer: str | None = None) -> str:
        """stdout of `npu-smi <args>`; `answer` is written to its stdin (a `set` command that
        asks "Are you sure...?(Y/N)"), which is otherwise empty.

        A non-zero exit is an error, except npu-smi's own answers "There is no NPU card..."
        and "...does not support querying...", which are returned as text for the parsers.
        """
        if self._on_done is None:
            return self._run(args, timeout=timeout, answer=answer)
        started = time.monotonic()
        ok = False
        try:
            out = self._run(args, timeout=timeout, answer=answer)
            ok = True
            return out
        finally:
            self._on_done(label(args), time.monotonic() - started, ok)

    def _run(self, args: Command, *, timeout: float, answer: str | None = None) -> str:
        command = describe(args)
        process = self._start(command, args, answer)
        try:
            stdout, stderr = _bounded_output(process, command, max(timeout, 0.0))
        finally:
            _close_pipes(process)
        if process.returncode == 0:
            return stdout
        if any(answer in stdout + stderr for answer in KNOWN_ANSWERS):
            return stdout + stderr
        detail = clipped(_first_said(stderr) or _first_said(stdout) or "no output")
        raise ProbeError(f"`{command}` exited with status {process.returncode}: {detail}")

    def run_all(self, commands: Sequence[Command], *, timeout: float) -> tuple[str, ...]:
        """Run `commands` concurrently; the first failure (in `commands` order) is raised."""
        if not commands:
            return ()
        with ThreadPoolExecutor(len(commands), thread_name_prefix="npu-smi") as pool:
            futures = [pool.submit(self.run, args, timeout=timeout) for args in commands]
            return tuple(future.result() for future in futures)

    def _start(self, command: str, args: Command, answer: str | None) -> "subprocess.Popen[bytes]":
        try:
            process = subprocess.Popen(
                [str(self.path), *args],
                stdin=subprocess.DEVNULL if answer is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "LANG": "C", "LC_ALL": "C"},
                start_new_session=True,  # so a hang can be killed with all its children
            )
        except OSError as error:
            reason = error.strerror or str(error)
            raise ProbeError(f"`{command}`: cannot run {self.path}: {reason}") from error
        if process.stdin is not None:  # a few bytes: the pipe's buffer takes them at once
            with contextlib.suppress(OSError):  # it exited without reading: its output says
                process.stdin.write((answer or "").encode())
            with contextlib.suppress(OSError):
                process.stdin.close()
        return process


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _first_said(output: str) -> str:
    """What a failed command's output says first: its `Message :` line where it has one (a
    `set` prints its prompt, then `Status : Fail` and the Message), else its first line."""
    lines = [line.strip() for line in output.strip().splitlines()]
    said = next((line for line in lines if line.partition(":")[0].strip() == "Message"), None)
    return said or (lines[0] if lines else "")


def _bounded_output(
    process: "subprocess.Popen[bytes]", command: str, timeout: float
) -> tuple[str, str]:
    """stdout and stderr of an exited `process`; ProbeError (it killed) past a bound or the
    deadline."""
    deadline = time.monotonic() + timeout
    try:
        output = read_bounded(process, deadline=deadline)
    except OutputTooLarge as error:
        _kill(process)
        raise ProbeError(f"`{command}`: {error} (killed): npu-smi's answers are kB") from None
    if output is None or not _exited(process, deadline):
        _kill(process)
        raise ProbeError(f"`{command}`: no answer within {timeout:.1f}s (killed)")
    return _text(output.stdout), _text(output.stderr)


def _exited(process: "subprocess.Popen[bytes]", deadline: float) -> bool:
    try:
        process.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        return False
    return True


def _close_pipes(process: "subprocess.Popen[bytes]") -> None:
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def _kill(process: "subprocess.Popen[bytes]") -> None:
    """SIGKILL to its whole session; its pipes are closed, not read: what it printed is unread."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    _close_pipes(process)
    try:
        process.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
