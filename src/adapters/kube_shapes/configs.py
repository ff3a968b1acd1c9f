"""`config[].opaque` entries of resource.k8s.io/v1 DeviceClasses (`spec.config`), claims
(`spec.devices.config`) and allocations (`status.allocation.devices.config`, with `source`), to
and from the domain. The parameters are kept as JSON text: only the driver they name decodes
them (domain/npu_config.py for ours)."""

import json
from typing import Any

from npu_dra.adapters.kube_shapes.raw_parameters import RawParameters
from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.claims import ConfigSource, OpaqueConfig
from npu_dra.domain.ids import DriverName, RequestName
from npu_dra.domain.npu_config import MAX_PARAMETERS_BYTES

MAX_CONFIGS = 32  # DeviceConfigMaxSize


def configs_from_api(
    fields: Fields, source: ConfigSource | None, *, key: str = "config"
) -> tuple[OpaqueConfig, ...]:
    """The entries under `key`; `source` None: each entry says its own (an allocation's)."""
    entries = fields.items(key)
    if len(entries) > MAX_CONFIGS:
        raise fields.fail(key, f"must have at most {MAX_CONFIGS} items")
    return tuple(_config(entry, source) for entry in entries)


def _config(entry: Fields, source: ConfigSource | None) -> OpaqueConfig:
    if source is None:
        text = entry.need("source", str)
        try:
            source = ConfigSource(text)
        except ValueError:
            raise entry.fail("source", f"{text!r} is not FromClass or FromClaim") from None
    opaque = entry.sub("opaque")
    if not entry.has("opaque"):
        raise entry.fail("opaque", "is required")
    if not opaque.has("parameters"):
        raise opaque.fail("parameters", "is required")
    requests = tuple(RequestName(r) for r in entry.get("requests", list, []))
    return OpaqueConfig(source, DriverName(opaque.need("driver", str)), _text(opaque), requests)


def _text(opaque: Fields) -> str:
    """The parameters as JSON text. Read from the API server (opaque_cut.py), they are text
    already, judged by nobody here: only the driver they name decodes and bounds them (ours:
    domain/npu_config.py). Given parsed (a scenario `simulate` reads, the in-memory API server),
    they are held to the API server's own bound, as it would hold them (UTF-8, not escapes)."""
    found = opaque.opt("parameters", object)
    if isinstance(found, RawParameters):
        return str(found)
    if not isinstance(found, dict):
        raise opaque.fail("parameters", f"expected dict, got {type(found).__name__}")
    text = json.dumps(found, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode()) > MAX_PARAMETERS_BYTES:
        raise opaque.fail("parameters", f"must be at most {MAX_PARAMETERS_BYTES} bytes")
    return text


def configs_to_api(configs: tuple[OpaqueConfig, ...], *, sources: bool) -> list[dict[str, Any]]:
    """Entries as an allocation (`sources`) or a claim or class writes them."""
    return [
        {
            **({"source": c.source.value} if sources else {}),
            **({"requests": list(c.requests)} if c.requests else {}),
            "opaque": {"driver": c.driver, "parameters": json.loads(c.parameters)},
        }
        for c in configs
    ]
