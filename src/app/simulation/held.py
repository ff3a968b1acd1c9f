"""What a run's result carries beside its pods: who held each device before the run (a snapshot's
claims), and the CDI specs the nodes wrote for the claims they prepared."""

from collections.abc import Sequence

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.simulation_files.scenario import Scenario
from npu_dra.app.simulation.node_plugins import NodePlugin
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.ids import ClaimUID


def held_before(scenario: Scenario) -> dict[tuple[str, str, str], str]:
    """Who holds each device: a shared one may be held by several claims."""
    held: dict[tuple[str, str, str], str] = {}
    for c in map(claim_from_api, scenario.claims):
        for r in c.allocation.results if c.allocation is not None else ():
            key, who = (r.driver, r.pool, r.device), f"{c.ref.namespace}/{c.ref.name}"
            if who not in held.get(key, "").split(","):
                held[key] = f"{held[key]},{who}" if key in held else who
    return held


def cdi_specs(plugins: Sequence[NodePlugin]) -> dict[ClaimUID, CdiSpec]:
    """The CDI specs the nodes that prepared claims wrote, by claim."""
    return {
        uid: spec
        for plugin in plugins
        if plugin.built
        for uid in sorted(plugin.services.cdi.claim_uids())
        if (spec := plugin.services.cdi.read(uid=uid)) is not None
    }
