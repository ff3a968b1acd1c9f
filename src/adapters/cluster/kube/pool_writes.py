"""Writing a node's pool of ResourceSlices in the pool-sync order: deletes (with UID and
resourceVersion preconditions), updates, creates (domain/pool_sync plans them).

Creates cannot conflict (the server generates the names), so two writers of one pool (a rolling
update's two plugin pods) can both create a full set of slices. Every sync therefore reads the pool
back after writing, and repairs it until what is stored is one whole pool: one generation,
`resourceSliceCount` slices, no device twice. Whose content that is, is last-writer-wins. A pool
holding devices no npu-dra wrote (another driver of the same name: domain/other_driver.py) is
left alone, with an error that says so.
"""

import logging
from collections.abc import Callable, Sequence
from typing import Any

from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.raw import RawResourceApi
from npu_dra.adapters.cluster.kube.retry import Deadline, StaleRead
from npu_dra.adapters.kube_shapes.slices import slice_from_api, slice_to_api
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.other_driver import other_driver_publishes, others_devices
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.pool_sync import plan_sync

log = logging.getLogger(__name__)
MAX_REPAIRS = 5  # read-back rounds per sync before a racing writer is reported


def whole_pool(stored: Sequence[ResourceSlice]) -> bool:
    """One generation, as many slices as each one counts, and no device twice."""
    pools = {(s.pool.generation, s.pool.resource_slice_count) for s in stored}
    names = [d.name for s in stored for d in s.devices]
    return len(pools) == 1 and pools.pop()[1] == len(stored) and len(names) == len(set(names))


class PoolWriter:
    """`stored(deadline, driver, node)` lists the pool's slices as dicts (sorted by name),
    `owner(deadline, node)` the owner reference every slice gets (None: the Node is missing)."""

    def __init__(
        self,
        resource: RawResourceApi,
        stored: Callable[[Deadline, DriverName | None, NodeName | None], list[dict[str, Any]]],
        owner: Callable[[Deadline, NodeName], dict[str, Any] | None],
    ) -> None:
        self._resource, self._list, self._owner = resource, stored, owner

    def sync(
        self,
        deadline: Deadline,
        node: NodeName,
        driver: DriverName,
        desired: Sequence[ResourceSlice],
    ) -> tuple[ResourceSlice, ...]:
        for round_ in range(MAX_REPAIRS + 1):
            raw = {o["metadata"]["name"]: o for o in self._list(deadline, driver, node)}
            stored = tuple(slice_from_api(o) for o in raw.values())
            if others_devices(stored, driver):  # written by another driver of our name
                raise other_driver_publishes(node, driver, stored)
            plan = plan_sync(stored, desired)
            if plan.empty or (round_ and whole_pool(stored)):
                return stored
            owner = self._owner(deadline, node)
            for name in plan.deletes:
                self._delete(deadline, raw[name])
            for s in plan.updates:
                body = slice_to_api(s, owner=owner)
                body["metadata"] = {**raw[s.name or ""]["metadata"], **body["metadata"]}
                self._replace(deadline, body)
            for s in plan.creates:
                self._resource.create_resource_slice(
                    slice_to_api(s, owner=owner),
                    _preload_content=False,
                    _request_timeout=deadline.timeout(),
                )
            log.info(
                "synced pool %s: %d deleted, %d updated, %d created",
                node,
                len(plan.deletes),
                len(plan.updates),
                len(plan.creates),
            )
        raise ClusterUnavailable(
            f"ResourceSlices of {node}/{driver}: still not one whole pool after {MAX_REPAIRS} "
            "repairs; another writer keeps changing them"
        )

    def _delete(self, deadline: Deadline, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        preconditions = {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
        try:
            self._resource.delete_resource_slice(
                meta["name"],
                body={"preconditions": preconditions},
                _preload_content=False,
                _request_timeout=deadline.timeout(),
            )
        except ApiException as error:
            if error.status != 404:  # already gone is what we wanted
                raise

    def _replace(self, deadline: Deadline, body: dict[str, Any]) -> None:
        name = body["metadata"]["name"]
        try:
            self._resource.replace_resource_slice(
                name, body, _preload_content=False, _request_timeout=deadline.timeout()
            )
        except ApiException as error:
            if error.status == 404:
                raise StaleRead(f"ResourceSlice {name} was deleted meanwhile") from error
            raise
