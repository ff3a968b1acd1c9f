"""The simulation's port to its API server: the objects it creates (Nodes, slices, classes,
claims, the claims templates become), reads back, and the allocations it records. The in-memory
API server (adapters/cluster/memory.py) answers it; the composition root hands it in, so the
simulation, like every other caller, never imports a cluster adapter (an import-linter contract
keeps it so)."""

from collections.abc import Mapping
from typing import Any, Protocol

from npu_dra.domain.claims import Allocation, ClaimRef


class ApiObjects(Protocol):
    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The object as stored: name generated from generateName, uid set."""
        ...

    def get(self, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None: ...

    def list(self, kind: str) -> list[dict[str, Any]]: ...

    def set_allocation(self, ref: ClaimRef, allocation: Allocation) -> None:
        """The claim's status.allocation, as the scheduler writes it when binding."""
        ...
