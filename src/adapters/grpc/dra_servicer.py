"""The kubelet's DRAPlugin service, v1 and v1beta1 on one socket: a thin face over the preparer.

Contracts the kubelet relies on: the response holds an entry for every claim it sent, keyed by
the UID string it sent (a claim the kubelet does not get back fails the whole call on its side);
one bad claim is an error in its own slot, never a failed call; request names lose their
`/subrequest` suffix; only v1 can carry a device's share ID. The answer is a map keyed by UID, so
a UID the call names under two identities (a valid name and `../x`) could get one answer for
both: such a UID is refused, for every identity, and nothing about it changes. A prepare whose
caller already gave up (its deadline passed while it queued for a worker) is not started: the
kubelet unprepares such a claim and never asks again, so preparing it now would leave it
prepared for good.
"""

import itertools
import logging
from collections.abc import Iterable
from typing import Any, Protocol

import attrs
import grpc

from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as v1
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2_grpc as v1_grpc
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2 as v1beta1
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2_grpc as v1beta1_grpc
from npu_dra.domain.checkpoint import PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace
from npu_dra.domain.ports import CallerGone, NodeClaims

log = logging.getLogger(__name__)


class WireClaim(Protocol):
    """`Claim` of either API version."""

    namespace: str
    uid: str
    name: str


@attrs.frozen
class Answer:
    devices: tuple[PreparedDevice, ...] = ()
    error: str = ""


class DraCalls:
    """Version-independent handling: wire claims in, one answer per raw UID out."""

    def __init__(self, preparer: NodeClaims) -> None:
        self._preparer = preparer
        self._ids = itertools.count(1)

    def prepare(
        self, claims: Iterable[WireClaim], caller_gone: CallerGone | None = None
    ) -> dict[str, Answer]:
        refs, answers = _refs(claims)
        request = next(self._ids)
        if log.isEnabledFor(logging.DEBUG):  # the claim list is built only to be logged
            log.debug("request %d: prepare %s", request, ", ".join(map(str, refs)) or "-")
        try:
            outcomes = self._preparer.prepare(refs, caller_gone)
        except (DomainError, OSError) as error:  # node-wide (checkpoint, disk): every claim
            log.error("request %d: prepare failed: %s", request, error)
            return answers | {ref.uid: Answer(error=str(error)) for ref in refs}
        for ref in refs:
            outcome = outcomes[ref.uid]
            answers[ref.uid] = Answer(outcome.devices, outcome.error or "")
        return answers

    def unprepare(self, claims: Iterable[WireClaim]) -> dict[str, str]:
        refs, answers = _refs(claims)
        request = next(self._ids)
        if log.isEnabledFor(logging.DEBUG):  # the claim list is built only to be logged
            log.debug("request %d: unprepare %s", request, ", ".join(map(str, refs)) or "-")
        try:
            errors = self._preparer.unprepare(refs)
        except (DomainError, OSError) as error:
            log.error("request %d: unprepare failed: %s", request, error)
            errors = {ref.uid: str(error) for ref in refs}
        return {uid: a.error for uid, a in answers.items()} | {
            ref.uid: errors[ref.uid] or "" for ref in refs
        }


def _refs(claims: Iterable[WireClaim]) -> tuple[list[ClaimRef], dict[str, Answer]]:
    """The call's claims as references, one per UID, and the answers of those refused: a UID
    named under more than one identity, or a reference that is not valid."""
    names: dict[str, set[tuple[str, str]]] = {}
    for claim in claims:
        names.setdefault(claim.uid, set()).add((claim.namespace, claim.name))
    refs: list[ClaimRef] = []
    rejected: dict[str, Answer] = {}
    for uid, identities in names.items():  # in the call's order, each UID once
        if len(identities) > 1:
            log.warning("a call named UID %.64s as %d claims: refused", uid, len(identities))
            rejected[uid] = Answer(error=_named_twice(identities))
            continue
        ((namespace, name),) = identities
        try:
            refs.append(ClaimRef(Namespace(namespace), ClaimName(name), ClaimUID(uid)))
        except DomainError as error:
            rejected[uid] = Answer(error=f"invalid claim reference: {error}")
    return refs, rejected


def _named_twice(identities: set[tuple[str, str]]) -> str:
    shown = " and ".join(sorted(f"{ns[:63]}/{name[:63]!r}" for ns, name in identities)[:2])
    return (
        f"one UID is named more than once in this call ({len(identities)} claims: {shown}); "
        "refused for all of them, nothing changed"
    )


class DraPluginV1(v1_grpc.DRAPluginServicer):
    def __init__(self, calls: DraCalls) -> None:
        self._calls = calls

    def NodePrepareResources(
        self, request: v1.NodePrepareResourcesRequest, context: Any
    ) -> v1.NodePrepareResourcesResponse:
        _refuse_if_abandoned(context)
        answers = self._calls.prepare(request.claims, _gone(context))
        return v1.NodePrepareResourcesResponse(
            claims={uid: _v1_answer(a) for uid, a in answers.items()}
        )

    def NodeUnprepareResources(
        self, request: v1.NodeUnprepareResourcesRequest, context: Any
    ) -> v1.NodeUnprepareResourcesResponse:
        errors = self._calls.unprepare(request.claims)
        return v1.NodeUnprepareResourcesResponse(
            claims={uid: v1.NodeUnprepareResourceResponse(error=e) for uid, e in errors.items()}
        )


class DraPluginV1beta1(v1beta1_grpc.DRAPluginServicer):
    def __init__(self, calls: DraCalls) -> None:
        self._calls = calls

    def NodePrepareResources(
        self, request: v1beta1.NodePrepareResourcesRequest, context: Any
    ) -> v1beta1.NodePrepareResourcesResponse:
        _refuse_if_abandoned(context)
        answers = self._calls.prepare(request.claims, _gone(context))
        return v1beta1.NodePrepareResourcesResponse(
            claims={uid: _v1beta1_answer(a) for uid, a in answers.items()}
        )

    def NodeUnprepareResources(
        self, request: v1beta1.NodeUnprepareResourcesRequest, context: Any
    ) -> v1beta1.NodeUnprepareResourcesResponse:
        errors = self._calls.unprepare(request.claims)
        return v1beta1.NodeUnprepareResourcesResponse(
            claims={
                uid: v1beta1.NodeUnprepareResourceResponse(error=e) for uid, e in errors.items()
            }
        )


def _refuse_if_abandoned(context: Any) -> None:
    remaining = context.time_remaining()
    if not context.is_active() or (remaining is not None and remaining <= 0):
        log.warning("a prepare call arrived after its deadline; not started")
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline passed before the call ran")


def _gone(context: Any) -> CallerGone:
    """Whether the kubelet left the call (cancelled it, or its deadline passed)."""
    return lambda: not context.is_active()


def _v1_answer(answer: Answer) -> v1.NodePrepareResourceResponse:
    if answer.error:
        return v1.NodePrepareResourceResponse(error=answer.error)
    devices = [
        v1.Device(
            request_names=_request_names(d),
            pool_name=d.pool,
            device_name=d.device,
            cdi_device_ids=list(d.cdi_ids),
            share_id=d.share_id,  # None leaves the optional field unset
        )
        for d in answer.devices
    ]
    return v1.NodePrepareResourceResponse(devices=devices)


def _v1beta1_answer(answer: Answer) -> v1beta1.NodePrepareResourceResponse:
    if answer.error:
        return v1beta1.NodePrepareResourceResponse(error=answer.error)
    devices = [
        v1beta1.Device(
            request_names=_request_names(d),
            pool_name=d.pool,
            device_name=d.device,
            cdi_device_ids=list(d.cdi_ids),
        )
        for d in answer.devices
    ]
    return v1beta1.NodePrepareResourceResponse(devices=devices)


def _request_names(device: PreparedDevice) -> list[str]:
    return [name.split("/", 1)[0] for name in device.request_names]


def add_dra_services(server: Any, calls: DraCalls) -> None:
    v1_grpc.add_DRAPluginServicer_to_server(DraPluginV1(calls), server)  # type: ignore[no-untyped-call]
    v1beta1_grpc.add_DRAPluginServicer_to_server(DraPluginV1beta1(calls), server)  # type: ignore[no-untyped-call]
