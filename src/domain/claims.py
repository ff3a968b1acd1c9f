"""Device classes, resource claims and their allocation results (resource.k8s.io/v1 semantics)."""

import enum
import re

import attrs

from npu_dra.domain.attributes import is_dns_label, is_dns_subdomain
from npu_dra.domain.device_tolerations import DeviceToleration
from npu_dra.domain.errors import InvalidName
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.quantity import Quantity

_UID = re.compile(r"^[a-zA-Z0-9]([-a-zA-Z0-9]{0,62}[a-zA-Z0-9])?\Z")


def check_claim_uid(uid: str) -> ClaimUID:
    """`uid` if it is a UID (letters, digits, '-'; <=64), else InvalidName. UIDs become paths."""
    if not _UID.match(uid):
        raise InvalidName(f"claim UID {uid[:80]!r} is not a UID (letters, digits, '-')")
    return ClaimUID(uid)


class AllocationMode(enum.Enum):
    EXACT_COUNT = "ExactCount"
    ALL = "All"


class ConfigSource(enum.Enum):
    CLASS = "FromClass"
    CLAIM = "FromClaim"


@attrs.frozen
class OpaqueConfig:
    """One `config[].opaque` entry of a class, a claim or an allocation: for `driver`, applying
    to `requests` (all when empty); `parameters` as the JSON text it was given in, decoded only
    by the driver it names (domain/npu_config.py for ours)."""

    source: ConfigSource
    driver: DriverName
    parameters: str
    requests: tuple[RequestName, ...] = ()


# A request's `capacity.requests` and a result's `consumedCapacity` (DRAConsumableCapacity):
# (capacity name, amount) pairs, in the order given.
CapacityAmounts = tuple[tuple[str, Quantity], ...]


@attrs.frozen
class DeviceClass:
    name: DeviceClassName
    selectors: tuple[str, ...] = ()
    config: tuple[OpaqueConfig, ...] = ()


@attrs.frozen
class DeviceSubRequest:
    """One alternative of a `firstAvailable` request (a prioritized list); no admin access."""

    name: RequestName
    device_class_name: DeviceClassName
    selectors: tuple[str, ...] = ()
    allocation_mode: AllocationMode = AllocationMode.EXACT_COUNT
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityAmounts = ()


@attrs.frozen
class DeviceRequest:
    """`exactly` (the fields below) or, when `first_available` is set, a prioritized list whose
    first satisfiable alternative is allocated (then `device_class_name` is empty)."""

    name: RequestName
    device_class_name: DeviceClassName
    selectors: tuple[str, ...] = ()
    allocation_mode: AllocationMode = AllocationMode.EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    first_available: tuple[DeviceSubRequest, ...] = ()
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityAmounts = ()


@attrs.frozen
class Constraint:
    """`matchAttribute`: every device of the listed requests (all if empty) shares the value.
    `distinctAttribute` (DRAConsumableCapacity, off in v1.34) is kept as the API server keeps it,
    and is used only where `matchAttribute` is unset (scheduling/constraints.py)."""

    match_attribute: str | None
    requests: tuple[RequestName, ...] = ()
    distinct_attribute: str | None = None


@attrs.frozen
class ClaimSpec:
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[Constraint, ...] = ()
    config: tuple[OpaqueConfig, ...] = ()


@attrs.frozen
class AllocationResult:
    request: RequestName
    driver: DriverName
    pool: PoolName
    device: DeviceName
    admin_access: bool = False
    share_id: str | None = None
    consumed_capacity: CapacityAmounts = ()

    @property
    def request_name(self) -> RequestName:
        """The request without a `/subrequest` suffix, as the kubelet expects it back."""
        return RequestName(self.request.split("/", 1)[0])


@attrs.frozen
class Allocation:
    """`config`: the class configs, then the claim's, as the scheduler copied them in."""

    results: tuple[AllocationResult, ...]
    node_name: NodeName | None = None
    config: tuple[OpaqueConfig, ...] = ()


@attrs.frozen
class ClaimRef:
    """The three fields the kubelet sends; validated because they end up in paths and logs."""

    namespace: Namespace = attrs.field()
    name: ClaimName = attrs.field()
    uid: ClaimUID = attrs.field()

    @namespace.validator
    def _check_namespace(self, _: "attrs.Attribute[Namespace]", value: str) -> None:
        if not is_dns_label(value):
            raise InvalidName(f"claim namespace {value[:80]!r} is not a DNS label")

    @name.validator
    def _check_name(self, _: "attrs.Attribute[ClaimName]", value: str) -> None:
        if not is_dns_subdomain(value):
            raise InvalidName(f"claim name {value[:80]!r} is not a DNS subdomain")

    @uid.validator
    def _check_uid(self, _: "attrs.Attribute[ClaimUID]", value: str) -> None:
        check_claim_uid(value)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name} ({self.uid})"


@attrs.frozen
class ResourceClaim:
    """`owner`: the UID of the pod that controls it (a claim generated for that pod from its
    template); `reserved_for`: the UIDs of the pods its status reserves it for."""

    ref: ClaimRef
    spec: ClaimSpec
    allocation: Allocation | None = None
    owner: str | None = None
    reserved_for: tuple[str, ...] = ()

    def results_for(self, driver: DriverName) -> tuple[AllocationResult, ...]:
        if self.allocation is None:
            return ()
        return tuple(r for r in self.allocation.results if r.driver == driver)


@attrs.frozen
class NodePod:
    """A pod bound to this node, as far as its claims go: `claims` were generated for it (its
    status.resourceClaimStatuses); `done` once it is deleted or in a terminal phase."""

    uid: str
    namespace: Namespace
    name: str
    claims: tuple[ClaimName, ...]
    done: bool
