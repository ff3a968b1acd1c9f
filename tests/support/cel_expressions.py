"""A bare CEL expression run as a selector through the production evaluator, on one plain device.

The library tests (tests/unit/cel/) state Kubernetes' CEL semantics one expression at a time,
mostly in the form `<call> == <what Kubernetes v1.34.3 returns>`.
"""

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.ids import DriverName
from npu_dra.domain.scheduling.selectors import SelectorDevice

DRIVER = "npu.huawei.com"
DEVICE = SelectorDevice(driver=DriverName(DRIVER), attributes={}, capacity={})


def holds(evaluator: CelSelectorEvaluator, expression: str) -> bool:
    return evaluator.matches(expression=expression, device=DEVICE)
