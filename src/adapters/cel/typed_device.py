"""The type the API server gives `device`, for the environment that only type-checks selectors.

k8s.io/dynamic-resource-allocation@v0.34.3 (and @v0.36.3) cel/compile.go declares `device` as
the object type `kubernetes.DRADevice`: `driver` a string, `attributes` a map of domains to maps
of names to `google.protobuf.Any` (`dyn` when DRAListTypeAttributes is on, 1.36), `capacity` a
map of domains to maps of names to `kubernetes.Quantity`, and, when DRAConsumableCapacity is on,
`allowMultipleAllocations` a bool. So `device.driver == 1` or `device.foo` does not compile there.

The binding types a variable only as a protobuf message, and a message field cannot be a map of
maps, so the two maps are declared as variables named `device.attributes` and `device.capacity`,
which the checker resolves before a field of `device` (as CEL resolves qualified names). The
message's own `attributes` and `capacity` fields, maps of `google.protobuf.Struct` (a map of
`dyn`), type only a `device` used whole (`cel.bind(d, device, d.capacity...)`), less strictly.
The runtime cannot take a map where it declares a message, so this environment never evaluates.
"""

import functools

from cel_expr_python import cel
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, struct_pb2

from npu_dra.adapters.cel.compatibility import Compatibility
from npu_dra.adapters.cel.messages import QUANTITY, message_files

DEVICE = "kubernetes.DRADevice"
ANY = cel.Type("google.protobuf.Any")
_FIELD = descriptor_pb2.FieldDescriptorProto
_STRUCT = ".google.protobuf.Struct"


def _device_file(consumable_capacity: bool) -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="npu_dra/cel/device.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=[struct_pb2.DESCRIPTOR.name],
    )
    device = file.message_type.add(name=DEVICE.rpartition(".")[2])
    optional = _FIELD.LABEL_OPTIONAL
    device.field.add(name="driver", number=1, type=_FIELD.TYPE_STRING, label=optional)
    for number, name in enumerate(("attributes", "capacity"), 2):
        entry = device.nested_type.add(name=f"{name.capitalize()}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=_FIELD.TYPE_STRING, label=optional)
        entry.field.add(
            name="value", number=2, type=_FIELD.TYPE_MESSAGE, type_name=_STRUCT, label=optional
        )
        device.field.add(
            name=name,
            number=number,
            type=_FIELD.TYPE_MESSAGE,
            type_name=f".{DEVICE}.{entry.name}",
            label=_FIELD.LABEL_REPEATED,
        )
    if consumable_capacity:
        device.field.add(
            name="allowMultipleAllocations", number=4, type=_FIELD.TYPE_BOOL, label=optional
        )
    return file


@functools.cache
def device_pool(consumable_capacity: bool) -> descriptor_pool.DescriptorPool:
    """Our library messages, and `kubernetes.DRADevice` with or without its gated field."""
    pool = descriptor_pool.DescriptorPool()
    for module in (any_pb2, struct_pb2):
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    for file in (*message_files(), _device_file(consumable_capacity)):
        pool.Add(file)
    return pool


def device_variables(compatibility: Compatibility, *, maps: bool) -> dict[str, cel.Type]:
    """`device`, and with `maps` its two maps as qualified names (see the module docstring)."""
    variables = {"device": cel.Type(DEVICE)}
    if maps:
        value = cel.Type.DYN if compatibility.list_type_attributes else ANY
        string = cel.Type.STRING
        variables["device.attributes"] = cel.Type.Map(string, cel.Type.Map(string, value))
        variables["device.capacity"] = cel.Type.Map(string, cel.Type.Map(string, QUANTITY))
    return variables
