"""A claim request's or subrequest's `tolerations` (resource.k8s.io/v1 DeviceToleration),
checked as the v1.34.3 API server checks them: its defaulting first (an unset operator is Equal),
then pkg/apis/resource/validation/validation.go `validateDeviceToleration`: a key, if any, is a
label name; Exists takes no value, Equal's value is a label value; an effect, if any, is
NoSchedule or NoExecute, or v1.36.3's `None`: accepted for every version, since the kubelet
plugin reads claims through this too and must take whatever the cluster's API server accepted
(simulate decided as v1.34.3 therefore accepts a `None` the 1.34 API server refuses).

The API server keeps tolerations with DRADeviceTaints off (v1.34.3 drops only slices' taints),
so they are always checked. "At most 16" (DeviceTolerationsMaxLength) is documented but
validated by neither v1.34.3 nor v1.36.3, so it is not refused here either.
"""

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.device_taints import TaintEffect
from npu_dra.domain.device_tolerations import NONE_EFFECT, DeviceToleration, TolerationOperator
from npu_dra.domain.names import label_value_problem, qualified_name_problem

_OPERATORS = {o.value: o for o in TolerationOperator}
_EFFECTS = (*(e.value for e in TaintEffect), NONE_EFFECT)


def tolerations_from_api(fields: Fields) -> tuple[DeviceToleration, ...]:
    return tuple(_toleration(t) for t in fields.items("tolerations"))


def _toleration(fields: Fields) -> DeviceToleration:
    key = fields.get("key", str, "")
    if key and (problem := qualified_name_problem(key)):
        raise fields.fail("key", f"{key!r} {problem}")
    operator = _operator(fields)
    value = fields.get("value", str, "")
    if operator is TolerationOperator.EXISTS and value:
        raise fields.fail("value", "must be empty for operator `Exists`")
    if problem := label_value_problem(value):
        raise fields.fail("value", f"{value!r} {problem}")
    effect = fields.get("effect", str, "")
    if effect and effect not in _EFFECTS:
        raise fields.fail("effect", f"{effect!r} is not {' or '.join(_EFFECTS)}")
    return DeviceToleration(
        key=key,
        operator=operator,
        value=value,
        effect=effect,
        toleration_seconds=fields.opt("tolerationSeconds", int),
    )


def _operator(fields: Fields) -> TolerationOperator:
    text = fields.get("operator", str, "") or TolerationOperator.EQUAL.value
    if text not in _OPERATORS:
        raise fields.fail("operator", f"{text!r} is not {' or '.join(_OPERATORS)}")
    return _OPERATORS[text]
