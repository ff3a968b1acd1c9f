"""Checkpoint <-> a versioned, checksummed JSON document.

The checkpoint is the only record of which devices prepared claims hold, so a document that is
not exactly what we wrote (unknown version, damaged bytes, wrong types, a hostile UID) must fail
loudly; treating it as empty would hand held devices to new claims. Structuring goes through a
strict cattrs converter: cattrs alone would turn `"false"` into True and a string into a tuple.

Versions (domain/checkpoint.py): every version from OLDEST_CHECKPOINT_VERSION on is read, and
`Checkpoint.version` says which one was; what is written is the latest, except that a document
with no claims is written as version 1, which every release reads: a drained node can go back to
an older release, while one holding claims refuses it (the older release names the newer
version and stops). A version-1 document may not carry a field version 1 did not have.
"""

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin

import cattrs

from npu_dra.domain.checkpoint import (
    CHECKPOINT_VERSION,
    OLDEST_CHECKPOINT_VERSION,
    Checkpoint,
    PreparedClaim,
)
from npu_dra.domain.errors import InvalidName
from npu_dra.domain.ids import ClaimUID

API_GROUP = "npu-dra.checkpoint"
API_VERSION = f"{API_GROUP}/v{CHECKPOINT_VERSION}"
EMPTY_VERSION = 1  # the version a document with no claims is written in
NEW_IN = {"identity": 2}  # a device field: the version that brought it
T = TypeVar("T")


class CheckpointFormatError(ValueError):
    """A checkpoint document is not one this codec wrote."""


class NewerVersion(CheckpointFormatError):
    """A whole document of a version newer than this one reads: never damage, never torn."""


def encode(checkpoint: Checkpoint) -> dict[str, Any]:
    if stray := [str(c.ref) for uid, c in checkpoint.claims.items() if c.ref.uid != uid]:
        raise CheckpointFormatError(f"claims filed under another claim's UID: {stray}")
    claims = {uid: _converter.unstructure(c) for uid, c in checkpoint.claims.items()}
    version = CHECKPOINT_VERSION if claims else EMPTY_VERSION
    return {"apiVersion": f"{API_GROUP}/v{version}", "checksum": checksum(claims), "claims": claims}


def decode(document: object) -> Checkpoint:
    if isinstance(document, dict) and "v1" in document and "apiVersion" not in document:
        raise OtherDriverCheckpoint(_other_driver(document["v1"]))
    if not isinstance(document, dict) or document.keys() != {"apiVersion", "checksum", "claims"}:
        raise CheckpointFormatError("not an object of apiVersion, checksum and claims")
    version = _version(document["apiVersion"])
    if document["checksum"] != checksum(document["claims"]):
        raise CheckpointFormatError("checksum mismatch: the claims were changed or damaged")
    if not isinstance(document["claims"], dict):
        raise CheckpointFormatError("claims is not an object")
    claims = {uid: _claim(uid, raw, version) for uid, raw in document["claims"].items()}
    return Checkpoint(claims=claims, version=version)


class OtherDriverCheckpoint(CheckpointFormatError):
    """The file is Huawei's own Ascend DRA driver's (domain/huawei_names.py), not ours."""


def _other_driver(payload: object) -> str:
    """Why the start stops on Huawei's driver's checkpoint: the same file name in the same
    directory, since both are named npu.huawei.com."""
    claims = payload.get("preparedClaims") if isinstance(payload, dict) else None
    count = len(claims) if isinstance(claims, dict) else 0
    return (
        "this is the checkpoint of Huawei's own Ascend DRA driver (mind-cluster "
        f"ascend-dynamic-resource-allocation; {count} prepared claim(s) in it), not npu-dra's: "
        "that driver runs or ran on this node under the same driver name. Two drivers of one "
        "name would fight over the kubelet's registration and this node's ResourceSlices, so "
        "npu-dra does not start beside it. Remove it from this node, wait until no pod holds "
        "a claim it prepared, then move this file aside (docs/migrating-from-huawei-dra.md)"
    )


def _version(api_version: object) -> int:
    """The document's version, if this one reads it; otherwise why not: a newer one is named
    as such, so a downgrade over prepared claims stops with what to do instead of guessing."""
    found = re.fullmatch(r"npu-dra\.checkpoint/v(\d{1,6})", str(api_version)[:64])
    if found is None or int(found.group(1)) < OLDEST_CHECKPOINT_VERSION:
        raise CheckpointFormatError(f"unknown apiVersion {str(api_version)[:64]!r}")
    if (version := int(found.group(1))) <= CHECKPOINT_VERSION:
        return version
    raise NewerVersion(
        f"checkpoint version {version} was written by a newer npu-dra; this one reads versions "
        f"{OLDEST_CHECKPOINT_VERSION} to {CHECKPOINT_VERSION} and will not guess at it: run the "
        "newer version again, or downgrade only a node without prepared claims (drain it first)"
    )


def checksum(claims: object) -> str:
    """sha256 of the canonical JSON of the claims (sorted keys, no spaces, ASCII)."""
    canonical = json.dumps(claims, sort_keys=True, separators=(",", ":"))
    return f"sha256:{hashlib.sha256(canonical.encode()).hexdigest()}"


def _claim(uid: ClaimUID, raw: object, version: int) -> PreparedClaim:
    if later := _fields_after(raw, version):
        raise CheckpointFormatError(
            f"claim {uid[:80]!r}: {', '.join(later)} not in version {version} of the checkpoint"
        )
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


def _fields_after(raw: object, version: int) -> list[str]:
    """Device fields of `raw` that came after `version` (none where it is not that shape)."""
    devices = raw.get("devices") if isinstance(raw, dict) else None
    return sorted(
        {
            name
            for device in (devices if isinstance(devices, list) else ())
            if isinstance(device, dict)
            for name in device
            if NEW_IN.get(name, 0) > version
        }
    )


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


def journal_line(put: Checkpoint, removed: list[ClaimUID]) -> bytes:
    record = {"put": encode(put), "remove": removed}
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def parse_journal_line(raw: bytes) -> tuple[Checkpoint, list[ClaimUID]]:
    """One journal line; ValueError if it is not one `journal_line` wrote."""
    record: Any = json.loads(raw)
    if not isinstance(record, dict) or record.keys() != {"put", "remove"}:
        raise CheckpointFormatError("not an object of put and remove")
    removed = record["remove"]
    if not isinstance(removed, list) or not all(isinstance(uid, str) for uid in removed):
        raise CheckpointFormatError("remove is not a list of UIDs")
    return decode(record["put"]), [ClaimUID(uid) for uid in removed]


_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_structure_hook(str, _strict(str))
_converter.register_structure_hook(bool, _strict(bool))
_converter.register_structure_hook_factory(_is_tuple, _tuple_of)
