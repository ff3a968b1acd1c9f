"""DeviceTaintRule objects (resource.k8s.io/v1alpha3) of a scenario or a snapshot, decoded: the
devices a rule selects (driver, pool, device; unset selects all) and the taint it adds."""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.domain.device_taints import DeviceTaint, TaintEffect
from npu_dra.domain.scheduling.taint_rules import DeviceTaintRule

EFFECTS = {e.value: e for e in TaintEffect}


def device_taint_rule(doc: Mapping[str, Any]) -> DeviceTaintRule:
    root = Fields(doc, obj=describe(doc))
    spec = root.sub("spec")
    selector, taint = spec.sub("deviceSelector"), spec.sub("taint")
    for unmodelled in ("deviceClassName", "selectors"):  # v1alpha3 has them (v1.34.3)
        if selector.has(unmodelled):
            raise selector.fail(
                unmodelled, "not modelled by simulate (it selects by driver, pool and device)"
            )
    effect = taint.need("effect", str)
    if effect not in EFFECTS:
        raise taint.fail("effect", f"{effect!r}: expected {' or '.join(EFFECTS)}")
    return DeviceTaintRule(
        root.sub("metadata").need("name", str),
        DeviceTaint(taint.need("key", str), taint.get("value", str, ""), EFFECTS[effect]),
        driver=selector.opt("driver", str),
        pool=selector.opt("pool", str),
        device=selector.opt("device", str),
    )
