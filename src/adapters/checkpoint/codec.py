"""Checkpoint <-> a versioned, checksummed JSON document.

The checkpoint is the only record of which devices prepared claims hold, so a document that is
not exactly what we wrote (unknown version, damaged bytes, wrong types, a hostile UID) must fail
loudly; treating it as empty would hand held devices to new claims. Structuring goes through a
strict cattrs converter: cattrs alone would turn `"false"` into True and a string into a tuple.
"""

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin

import cattrs

from npu_dra.domain.checkpoint import CHECKPOINT_VERSION, Checkpoint, PreparedClaim
from npu_dra.domain.errors import InvalidName
from npu_dra.domain.ids import ClaimUID

API_VERSION = f"npu-dra.checkpoint/v{CHECKPOINT_VERSION}"
T = TypeVar("T")


class CheckpointFormatError(ValueError):
    """A checkpoint document is not one this codec wrote."""


def encode(checkpoint: Checkpoint) -> dict[str, Any]:
    if checkpoint.version != CHECKPOINT_VERSION:
        raise CheckpointFormatError(f"cannot write checkpoint version {checkpoint.version}")
    if stray := [str(c.ref) for uid, c in checkpoint.claims.items() if c.ref.uid != uid]:
        raise CheckpointFormatError(f"claims filed under another claim's UID: {stray}")
    claims = {uid: _converter.unstructure(c) for uid, c in checkpoint.claims.items()}
    return {"apiVersion": API_VERSION, "checksum": checksum(claims), "claims": claims}


def decode(document: object) -> Checkpoint:
    if not isinstance(document, dict) or document.keys() != {"apiVersion", "checksum", "claims"}:
        raise CheckpointFormatError("not an object of apiVersion, checksum and claims")
    if document["apiVersion"] != API_VERSION:
        raise CheckpointFormatError(_other_version(document["apiVersion"]))
    if document["checksum"] != checksum(document["claims"]):
        raise CheckpointFormatError("checksum mismatch: the claims were changed or damaged")
    if not isinstance(document["claims"], dict):
        raise CheckpointFormatError("claims is not an object")
    return Checkpoint(claims={uid: _claim(uid, raw) for uid, raw in document["claims"].items()})


def _other_version(api_version: object) -> str:
    """Why a checkpoint of another apiVersion is refused: a newer one is named as such, so a
    downgrade over prepared claims stops with what to do instead of guessing at the format."""
    found = re.fullmatch(r"npu-dra\.checkpoint/v(\d{1,6})", str(api_version)[:64])
    if found is None or int(found.group(1)) < CHECKPOINT_VERSION:
        return f"unknown apiVersion {str(api_version)[:64]!r}"
    return (
        f"checkpoint version {found.group(1)} was written by a newer npu-dra; this one reads "
        f"version {CHECKPOINT_VERSION} and will not guess at it: run the newer version again, or "
        "downgrade only a node without prepared claims (drain it first)"
    )


def checksum(claims: object) -> str:
    """sha256 of the canonical JSON of the claims (sorted keys, no spaces, ASCII)."""
    canonical = json.dumps(claims, sort_keys=True, separators=(",", ":"))
    return f"sha256:{hashlib.sha256(canonical.encode()).hexdigest()}"


def _claim(uid: ClaimUID, raw: object) -> PreparedClaim:
    try:
        claim = _converter.structure(raw, PreparedClaim)
    except cattrs.BaseValidationError as e:
        raise CheckpointFormatError(
            "; ".join(cattrs.transform_error(e, path=f"claims.{uid[:80]}"))
        ) from e
    except (InvalidName, TypeError) as e:
        raise CheckpointFormatError(f"claim {uid[:80]!r}: {e}") from e
    if claim.ref.uid != uid:
        raise CheckpointFormatError(f"claim {claim.ref} is filed under UID {uid[:80]!r}")
    return claim


def _strict(kind: type[T]) -> Callable[[object, type[T]], T]:
    def structure(value: object, _: type[T]) -> T:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _is_tuple(cls: Any) -> bool:
    return get_origin(cls) is tuple


def _tuple_of(cls: Any) -> Callable[[object, Any], tuple[Any, ...]]:
    item = get_args(cls)[0]

    def structure(value: object, _: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return tuple(_converter.structure(v, item) for v in value)

    return structure


_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_structure_hook(str, _strict(str))
_converter.register_structure_hook(bool, _strict(bool))
_converter.register_structure_hook_factory(_is_tuple, _tuple_of)
