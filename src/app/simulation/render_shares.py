"""How a simulation prints shares of a multi-allocatable device (DRAConsumableCapacity): the
device with what the share consumes, and in the JSON/YAML the share ID and consumed capacity,
with a word that the share IDs are simulate's own."""

from typing import Any

from npu_dra.app.simulation.run import SimulationResult
from npu_dra.domain.claims import AllocationResult

SHARE_ID_NOTE = (
    "simulate's own share IDs, stable from run to run (domain/scheduling/shared_use.py); "
    "kube-scheduler gives each share a random UUID"
)


def device_text(result: AllocationResult) -> str:
    """`npu-0`, or for a share `npu-0 (share: memCapacity=8Gi,aiCores=0)`."""
    if result.share_id is None:
        return result.device
    consumed = ",".join(f"{name}={q}" for name, q in result.consumed_capacity)
    return f"{result.device} (share{': ' + consumed if consumed else ''})"


def result_document(result: AllocationResult) -> dict[str, Any]:
    found: dict[str, Any] = {
        "request": result.request,
        "driver": result.driver,
        "pool": result.pool,
        "device": result.device,
    }
    if result.share_id is not None:
        found["shareID"] = result.share_id
    if result.consumed_capacity:
        found["consumedCapacity"] = {n: q.text for n, q in result.consumed_capacity}
    return found


def share_notes(result: SimulationResult) -> dict[str, str]:
    """`{"shareIDs": ...}` where some pod got a share, else nothing."""
    for pod in result.pods:
        for claim in pod.claims if pod.node else ():
            if claim.allocation and any(r.share_id for r in claim.allocation.results):
                return {"shareIDs": SHARE_ID_NOTE}
    return {}
