"""The committed gRPC stubs: fresh, wire-compatible with kubelet, and byte-exact.

Expected values below are transcribed from the kubelet wire contract
(/work/shared/reference/wire-facts.md §1), never from our own constants; actual values are read
from the descriptors the generated modules load into protobuf's default pool.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import Message

from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as dp_pb2
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc as dp_grpc
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as dra_v1_pb2
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2_grpc as dra_v1_grpc
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2 as dra_v1beta1_pb2
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2_grpc as dra_v1beta1_grpc
from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2 as health_v1_pb2
from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2_grpc as health_v1_grpc
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2 as health_pb2
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2_grpc as health_grpc
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2 as reg_pb2
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2_grpc as reg_grpc
from tools import codegen

DRA_V1 = "k8s.io.kubelet.pkg.apis.dra.v1"
DRA_V1BETA1 = "k8s.io.kubelet.pkg.apis.dra.v1beta1"

# (pb2 module, registered file name, proto package); all of them are loaded in this process.
FILES: list[tuple[ModuleType, str, str]] = [
    (dra_v1_pb2, "dra/v1/api.proto", DRA_V1),
    (dra_v1beta1_pb2, "dra/v1beta1/api.proto", DRA_V1BETA1),
    (reg_pb2, "pluginregistration/api.proto", "pluginregistration"),
    (health_pb2, "dra_health/v1alpha1/api.proto", "v1alpha1"),
    (health_v1_pb2, "dra_health/v1/api.proto", "v1"),
    (dp_pb2, "deviceplugin/v1beta1/api.proto", "v1beta1"),
]


# --------------------------------------------------------------------------- (a) drift


def test_checked_in_stubs_match_fresh_codegen() -> None:
    drift = codegen.check()
    assert drift == [], "run `make protos` and commit:\n" + "\n".join(drift)


def test_generated_imports_are_package_relative() -> None:
    for path in sorted(codegen.GEN_DIR.rglob("*.py*")):
        if path.suffix not in {".py", ".pyi"}:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            for root in ("dra", "dra_health", "pluginregistration", "deviceplugin"):
                assert not line.startswith((f"from {root} ", f"from {root}.", f"import {root}")), (
                    path,
                    line,
                )


# --------------------------------------------------------------------------- (b) wire facts


@pytest.mark.parametrize(("module", "file_name", "package"), FILES, ids=[f[1] for f in FILES])
def test_file_registered_once_under_its_package(
    module: ModuleType, file_name: str, package: str
) -> None:
    registered = descriptor_pool.Default().FindFileByName(file_name)
    assert registered is module.DESCRIPTOR
    assert registered.package == package
    assert _file_proto(module).syntax == "proto3"


def _file_proto(module: ModuleType) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(proto)
    return proto


# Full service name -> {method: (request, response, client_streaming, server_streaming)}.
SERVICES: dict[str, dict[str, tuple[str, str, bool, bool]]] = (
    {
        f"{pkg}.DRAPlugin": {
            "NodePrepareResources": (
                "NodePrepareResourcesRequest",
                "NodePrepareResourcesResponse",
                False,
                False,
            ),
            "NodeUnprepareResources": (
                "NodeUnprepareResourcesRequest",
                "NodeUnprepareResourcesResponse",
                False,
                False,
            ),
        }
        for pkg in (DRA_V1, DRA_V1BETA1)
    }
    | {
        "pluginregistration.Registration": {
            "GetInfo": ("InfoRequest", "PluginInfo", False, False),
            "NotifyRegistrationStatus": (
                "RegistrationStatus",
                "RegistrationStatusResponse",
                False,
                False,
            ),
        },
    }
    | {
        f"{pkg}.DRAResourceHealth": {
            "NodeWatchResources": (
                "NodeWatchResourcesRequest",
                "NodeWatchResourcesResponse",
                False,
                True,
            ),
        }
        for pkg in ("v1alpha1", "v1")
    }
    | {
        "v1beta1.Registration": {
            "Register": ("RegisterRequest", "Empty", False, False),
        },
        "v1beta1.DevicePlugin": {
            "GetDevicePluginOptions": ("Empty", "DevicePluginOptions", False, False),
            "ListAndWatch": ("Empty", "ListAndWatchResponse", False, True),
            "GetPreferredAllocation": (
                "PreferredAllocationRequest",
                "PreferredAllocationResponse",
                False,
                False,
            ),
            "Allocate": ("AllocateRequest", "AllocateResponse", False, False),
            "PreStartContainer": (
                "PreStartContainerRequest",
                "PreStartContainerResponse",
                False,
                False,
            ),
        },
    }
)


def _loaded_services() -> dict[str, dict[str, tuple[str, str, bool, bool]]]:
    services: dict[str, dict[str, tuple[str, str, bool, bool]]] = {}
    for module, _, _ in FILES:
        proto = _file_proto(module)
        prefix = f".{proto.package}."
        for service in proto.service:
            services[f"{proto.package}.{service.name}"] = {
                m.name: (
                    m.input_type.removeprefix(prefix),
                    m.output_type.removeprefix(prefix),
                    m.client_streaming,
                    m.server_streaming,
                )
                for m in service.method
            }
    return services


def test_services_methods_and_streaming_match_kubelet() -> None:
    assert _loaded_services() == SERVICES


class _RecordingChannel:
    """Stands in for grpc.Channel; records which multi-callable each stub method asked for."""

    def __init__(self) -> None:
        self.paths: dict[str, str] = {}

    def _record(self, kind: str) -> Any:
        def make(path: str, **_: Any) -> str:
            self.paths[path] = kind
            return path

        return make

    def __getattr__(self, kind: str) -> Any:
        if kind in {"unary_unary", "unary_stream", "stream_unary", "stream_stream"}:
            return self._record(kind)
        raise AttributeError(kind)


@pytest.mark.parametrize(
    ("stub", "service"),
    [
        (dra_v1_grpc.DRAPluginStub, f"{DRA_V1}.DRAPlugin"),
        (dra_v1beta1_grpc.DRAPluginStub, f"{DRA_V1BETA1}.DRAPlugin"),
        (reg_grpc.RegistrationStub, "pluginregistration.Registration"),
        (health_grpc.DRAResourceHealthStub, "v1alpha1.DRAResourceHealth"),
        (health_v1_grpc.DRAResourceHealthStub, "v1.DRAResourceHealth"),
        (dp_grpc.RegistrationStub, "v1beta1.Registration"),
        (dp_grpc.DevicePluginStub, "v1beta1.DevicePlugin"),
    ],
)
def test_stub_http2_paths(stub: Any, service: str) -> None:
    channel = _RecordingChannel()
    stub(channel)
    kinds = {(False, False): "unary_unary", (False, True): "unary_stream"}
    expected = {
        f"/{service}/{method}": kinds[(client, server)]
        for method, (_, _, client, server) in SERVICES[service].items()
    }
    assert channel.paths == expected


# Every message of wire-facts §1, written like its proto field declarations:
# "[repeated|optional] <type> <name> = <number>". Rendered back from the loaded descriptors below.
DRA_MESSAGES: dict[str, list[str]] = {
    "NodePrepareResourcesRequest": ["repeated Claim claims = 1"],
    "NodePrepareResourcesResponse": ["map<string, NodePrepareResourceResponse> claims = 1"],
    "NodePrepareResourceResponse": ["repeated Device devices = 1", "string error = 2"],
    "Device": [
        "repeated string request_names = 1",
        "string pool_name = 2",
        "string device_name = 3",
        "repeated string cdi_device_ids = 4",
        "optional string share_id = 5",
    ],
    "NodeUnprepareResourcesRequest": ["repeated Claim claims = 1"],
    "NodeUnprepareResourcesResponse": ["map<string, NodeUnprepareResourceResponse> claims = 1"],
    "NodeUnprepareResourceResponse": ["string error = 1"],
    "Claim": ["string namespace = 1", "string uid = 2", "string name = 3"],
}
DRA_V1BETA1_MESSAGES = DRA_MESSAGES | {
    "Device": [f for f in DRA_MESSAGES["Device"] if not f.endswith("= 5")],
}

# DRA health v1alpha1, and v1 (k8s.io/kubelet v0.37.2 pkg/apis/dra-health/v1/api.proto: the same
# messages, fields and numbers, in package v1).
HEALTH_MESSAGES = {
    "NodeWatchResourcesRequest": [],
    "DeviceIdentifier": ["string pool_name = 1", "string device_name = 2"],
    "DeviceHealth": [
        "DeviceIdentifier device = 1",
        "HealthStatus health = 2",
        "int64 last_updated_time = 3",
        "int64 health_check_timeout_seconds = 4",
        "string message = 5",
    ],
    "NodeWatchResourcesResponse": ["repeated DeviceHealth devices = 1"],
}

EXPECTED_MESSAGES: dict[str, dict[str, list[str]]] = {
    DRA_V1: DRA_MESSAGES,
    DRA_V1BETA1: DRA_V1BETA1_MESSAGES,
    "pluginregistration": {
        "InfoRequest": [],
        "PluginInfo": [
            "string type = 1",
            "string name = 2",
            "string endpoint = 3",
            "repeated string supported_versions = 4",
        ],
        "RegistrationStatus": ["bool plugin_registered = 1", "string error = 2"],
        "RegistrationStatusResponse": [],
    },
    "v1alpha1": HEALTH_MESSAGES,
    "v1": HEALTH_MESSAGES,
    "v1beta1": {
        "RegisterRequest": [
            "string version = 1",
            "string endpoint = 2",
            "string resource_name = 3",
            "DevicePluginOptions options = 4",
        ],
        "DevicePluginOptions": [
            "bool pre_start_required = 1",
            "bool get_preferred_allocation_available = 2",
        ],
        "Empty": [],
        "ListAndWatchResponse": ["repeated Device devices = 1"],
        "Device": ["string ID = 1", "string health = 2", "TopologyInfo topology = 3"],
        "TopologyInfo": ["repeated NUMANode nodes = 1"],
        "NUMANode": ["int64 ID = 1"],
        "PreferredAllocationRequest": [
            "repeated ContainerPreferredAllocationRequest container_requests = 1"
        ],
        "ContainerPreferredAllocationRequest": [
            "repeated string available_deviceIDs = 1",
            "repeated string must_include_deviceIDs = 2",
            "int32 allocation_size = 3",
        ],
        "PreferredAllocationResponse": [
            "repeated ContainerPreferredAllocationResponse container_responses = 1"
        ],
        "ContainerPreferredAllocationResponse": ["repeated string deviceIDs = 1"],
        "AllocateRequest": ["repeated ContainerAllocateRequest container_requests = 1"],
        "ContainerAllocateRequest": ["repeated string devices_ids = 1"],
        "AllocateResponse": ["repeated ContainerAllocateResponse container_responses = 1"],
        "ContainerAllocateResponse": [
            "map<string, string> envs = 1",
            "repeated Mount mounts = 2",
            "repeated DeviceSpec devices = 3",
            "map<string, string> annotations = 4",
            "repeated CDIDevice cdi_devices = 5",
        ],
        "CDIDevice": ["string name = 1"],
        "Mount": ["string container_path = 1", "string host_path = 2", "bool read_only = 3"],
        "DeviceSpec": [
            "string container_path = 1",
            "string host_path = 2",
            "string permissions = 3",
        ],
        "PreStartContainerRequest": ["repeated string devices_ids = 1"],
        "PreStartContainerResponse": [],
    },
}

_FDP = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    _FDP.TYPE_STRING: "string",
    _FDP.TYPE_BOOL: "bool",
    _FDP.TYPE_INT32: "int32",
    _FDP.TYPE_INT64: "int64",
}


def _render_messages(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, list[str]]:
    prefix = f".{proto.package}."

    def type_of(field: descriptor_pb2.FieldDescriptorProto, owner: Any) -> str:
        if field.type in _SCALARS:
            return _SCALARS[field.type]
        name = field.type_name.removeprefix(prefix)
        return name.removeprefix(f"{owner.name}.")

    rendered: dict[str, list[str]] = {}
    for message in proto.message_type:
        entries = {n.name: n for n in message.nested_type if n.options.map_entry}
        assert len(entries) == len(message.nested_type), f"unexpected nested type in {message}"
        lines = []
        for field in message.field:
            kind = type_of(field, message)
            if kind in entries:
                key, value = entries[kind].field
                decl = f"map<{type_of(key, message)}, {type_of(value, message)}>"
            elif field.label == _FDP.LABEL_REPEATED:
                decl = f"repeated {kind}"
            elif field.proto3_optional:
                decl = f"optional {kind}"
            else:
                decl = kind
            lines.append(f"{decl} {field.name} = {field.number}")
        rendered[message.name] = lines
    return rendered


@pytest.mark.parametrize(("module", "file_name", "package"), FILES, ids=[f[1] for f in FILES])
def test_messages_fields_and_numbers_match_kubelet(
    module: ModuleType, file_name: str, package: str
) -> None:
    proto = _file_proto(module)
    assert proto.package == package
    assert _render_messages(proto) == EXPECTED_MESSAGES[package]


def test_named_wire_facts() -> None:
    """The fields that changed across releases or are easy to get wrong, one by one."""

    def number(message: type[Message], field: str) -> int:
        return int(message.DESCRIPTOR.fields_by_name[field].number)

    assert number(dra_v1_pb2.NodePrepareResourceResponse, "error") == 2
    assert number(dra_v1_pb2.Device, "cdi_device_ids") == 4
    assert number(dra_v1_pb2.Device, "share_id") == 5
    assert dra_v1_pb2.Device.DESCRIPTOR.fields_by_name["share_id"].has_presence
    assert dra_v1_pb2.Device(share_id="").HasField("share_id")
    assert not dra_v1_pb2.Device().HasField("share_id")
    assert "share_id" not in dra_v1beta1_pb2.Device.DESCRIPTOR.fields_by_name
    assert 5 not in dra_v1beta1_pb2.Device.DESCRIPTOR.fields_by_number
    assert number(reg_pb2.PluginInfo, "supported_versions") == 4
    assert number(dp_pb2.ContainerAllocateResponse, "cdi_devices") == 5
    assert number(dp_pb2.ContainerPreferredAllocationRequest, "must_include_deviceIDs") == 2
    assert number(health_pb2.DeviceHealth, "health_check_timeout_seconds") == 4
    assert number(health_pb2.DeviceHealth, "message") == 5
    assert dp_pb2.Device.DESCRIPTOR.fields_by_name["ID"].json_name == "ID"


@pytest.mark.parametrize(
    ("module", "package"), [(health_pb2, "v1alpha1"), (health_v1_pb2, "v1")], ids=str
)
def test_health_status_enum_is_package_scoped(module: ModuleType, package: str) -> None:
    enum = module.DESCRIPTOR.enum_types_by_name["HealthStatus"]
    assert enum.full_name == f"{package}.HealthStatus"
    assert {v.name: v.number for v in enum.values} == {
        "UNKNOWN": 0,
        "HEALTHY": 1,
        "UNHEALTHY": 2,
    }
    assert descriptor_pool.Default().FindEnumTypeByName(f"{package}.HealthStatus") is enum
    assert module.UNHEALTHY == 2


# --------------------------------------------------------------------------- (c) wire bytes

WIRE_CASES: list[tuple[str, Message, bytes]] = [
    (
        "dra.v1 Claim",
        dra_v1_pb2.Claim(namespace="ns", uid="u", name="n"),
        b"\x0a\x02ns\x12\x01u\x1a\x01n",
    ),
    (
        # An explicitly empty share_id is still on the wire: tag (5<<3)|2 = 0x2a, length 0.
        "dra.v1 Device with empty share_id",
        dra_v1_pb2.Device(pool_name="p", device_name="d", share_id=""),
        b"\x12\x01p\x1a\x01d\x2a\x00",
    ),
    (
        # map<string, V> is a repeated entry message {key = 1; value = 2}.
        "dra.v1beta1 NodeUnprepareResourcesResponse",
        dra_v1beta1_pb2.NodeUnprepareResourcesResponse(
            claims={"u": dra_v1beta1_pb2.NodeUnprepareResourceResponse(error="e")}
        ),
        b"\x0a\x08" + b"\x0a\x01u" + b"\x12\x03" + b"\x0a\x01e",
    ),
    (
        "pluginregistration PluginInfo",
        reg_pb2.PluginInfo(
            type="DRAPlugin", name="d", endpoint="/e", supported_versions=["v1.DRAPlugin"]
        ),
        b"\x0a\x09DRAPlugin\x12\x01d\x1a\x02/e\x22\x0cv1.DRAPlugin",
    ),
    (
        "pluginregistration RegistrationStatus",
        reg_pb2.RegistrationStatus(plugin_registered=True, error="x"),
        b"\x08\x01\x12\x01x",
    ),
    (
        "v1alpha1 DeviceHealth",
        health_pb2.DeviceHealth(
            device=health_pb2.DeviceIdentifier(pool_name="p", device_name="d"),
            health=health_pb2.UNHEALTHY,
            last_updated_time=1,
            health_check_timeout_seconds=30,
            message="m",
        ),
        b"\x0a\x06\x0a\x01p\x12\x01d" + b"\x10\x02" + b"\x18\x01" + b"\x20\x1e" + b"\x2a\x01m",
    ),
    (
        "v1beta1 Device",
        dp_pb2.Device(
            ID="x",
            health="Healthy",
            topology=dp_pb2.TopologyInfo(nodes=[dp_pb2.NUMANode(ID=1)]),
        ),
        b"\x0a\x01x\x12\x07Healthy\x1a\x04\x0a\x02\x08\x01",
    ),
    (
        "v1beta1 ContainerAllocateResponse cdi_devices",
        dp_pb2.ContainerAllocateResponse(cdi_devices=[dp_pb2.CDIDevice(name="v/c=n")]),
        b"\x2a\x07\x0a\x05v/c=n",
    ),
    (
        "v1beta1 ContainerPreferredAllocationRequest",
        dp_pb2.ContainerPreferredAllocationRequest(
            available_deviceIDs=["a"], must_include_deviceIDs=["b"], allocation_size=1
        ),
        b"\x0a\x01a\x12\x01b\x18\x01",
    ),
]


@pytest.mark.parametrize(
    ("message", "wire"), [c[1:] for c in WIRE_CASES], ids=[c[0] for c in WIRE_CASES]
)
def test_wire_bytes(message: Message, wire: bytes) -> None:
    assert message.SerializeToString(deterministic=True) == wire
    parsed = type(message).FromString(wire)
    assert parsed == message


# --------------------------------------------------------------------------- kubelet-like call


def test_raw_kubelet_style_calls_reach_generated_servicers(tmp_path: Any) -> None:
    """Call the servers the way kubelet does: literal :path, hand-made bytes, unix socket."""
    from concurrent import futures

    import grpc

    class Dra(dra_v1_grpc.DRAPluginServicer):
        def NodePrepareResources(self, request: Any, context: Any) -> Any:
            claim = request.claims[0]
            device = dra_v1_pb2.Device(pool_name="p", device_name="d", share_id="s")
            return dra_v1_pb2.NodePrepareResourcesResponse(
                claims={claim.uid: dra_v1_pb2.NodePrepareResourceResponse(devices=[device])}
            )

    class Health(health_grpc.DRAResourceHealthServicer):
        def NodeWatchResources(self, request: Any, context: Any) -> Any:
            yield health_pb2.NodeWatchResourcesResponse()
            yield health_pb2.NodeWatchResourcesResponse(
                devices=[health_pb2.DeviceHealth(health=health_pb2.HEALTHY)]
            )

    socket = f"unix:{tmp_path}/dra.sock"
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    dra_v1_grpc.add_DRAPluginServicer_to_server(Dra(), server)  # type: ignore[no-untyped-call]
    health_grpc.add_DRAResourceHealthServicer_to_server(Health(), server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(socket)
    server.start()
    try:
        with grpc.insecure_channel(socket) as channel:
            prepare = channel.unary_unary(f"/{DRA_V1}.DRAPlugin/NodePrepareResources")
            # NodePrepareResourcesRequest{claims: [Claim{namespace: "ns", uid: "u", name: "n"}]}
            claim = b"\x0a\x02ns\x12\x01u\x1a\x01n"
            reply = prepare(b"\x0a" + bytes([len(claim)]) + claim, timeout=10)
            # {claims: {"u": {devices: [{pool_name: "p", device_name: "d", share_id: "s"}]}}}
            device = b"\x12\x01p\x1a\x01d\x2a\x01s"
            value = b"\x0a" + bytes([len(device)]) + device
            entry = b"\x0a\x01u\x12" + bytes([len(value)]) + value
            assert reply == b"\x0a" + bytes([len(entry)]) + entry

            watch = channel.unary_stream("/v1alpha1.DRAResourceHealth/NodeWatchResources")
            assert list(watch(b"", timeout=10)) == [b"", b"\x0a\x02\x10\x01"]
    finally:
        server.stop(grace=None)
