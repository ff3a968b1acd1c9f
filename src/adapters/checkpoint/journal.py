"""Reading the checkpoint journal (adapters/checkpoint/files.py): its lines applied in order to
the snapshot's claims, and what the store must know to append after them."""

from pathlib import Path

import attrs

from npu_dra.adapters.checkpoint.codec import NewerVersion, parse_journal_line
from npu_dra.domain.checkpoint import CHECKPOINT_VERSION, Checkpoint
from npu_dra.domain.errors import StateError


@attrs.frozen
class Replayed:
    checkpoint: Checkpoint
    lines: int  # whole, valid lines
    good_size: int  # bytes up to the end of the last of them
    torn: bool  # the journal ends in a line a crash cut (cut it before appending)
    older: int | None  # the oldest version below ours a line with claims was written in


def replay(checkpoint: Checkpoint, data: bytes, journal: Path) -> Replayed:
    """`checkpoint` with the journal's lines (`data`, read from `journal`) applied; a damaged
    line is a StateError unless it is the last (a save that never returned)."""
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty, or a line a crash cut short
    claims = dict(checkpoint.claims)
    count, good_size, torn, older = 0, 0, bool(tail), None
    for number, raw in enumerate(lines, start=1):
        try:
            put, removed = parse_journal_line(raw)
        except NewerVersion as e:  # whole, just not ours to read: refused like damage
            raise StateError(f"checkpoint journal {journal}, line {number}: {e}") from e
        except ValueError as e:
            if number == len(lines) and not tail:  # the last line: a save that never returned
                torn = True
                break
            raise StateError(f"checkpoint journal {journal}, line {number}: {e}") from e
        if put.claims and put.version < CHECKPOINT_VERSION:
            older = min(put.version, older or put.version)
        claims.update(put.claims)
        for uid in removed:
            claims.pop(uid, None)
        count += 1
        good_size += len(raw) + 1
    return Replayed(Checkpoint(claims=claims), count, good_size, torn, older)
