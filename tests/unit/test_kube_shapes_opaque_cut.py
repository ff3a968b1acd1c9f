"""A claim read from the server's bytes (kube_shapes/opaque_cut.py): where the JSON reader cannot
read it, its config entries' opaque parameters are cut out as the text they were sent in,
undecoded, and everything else reads as the plain reader reads it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.opaque_cut import claim_from_json, cut_document
from tests.support.kubelet import allocated_claim

OURS = {"apiVersion": "npu.huawei.com/v1alpha1", "kind": "NpuConfig"}


def _with_configs(foreign: Any) -> dict[str, Any]:
    claim = allocated_claim("c", ["npu-0"])
    claim["metadata"]["uid"] = "u-1"
    # a string that looks like a config entry, and a key named like one, elsewhere
    claim["metadata"]["annotations"] = {"note": '{"opaque": {"parameters": "\\"]}'}
    claim["spec"]["devices"]["config"] = [{"opaque": {"driver": "other", "parameters": foreign}}]
    claim["status"]["allocation"]["devices"]["config"] = [
        {"source": "FromClass", "opaque": {"driver": "npu.huawei.com", "parameters": OURS}},
        {"source": "FromClaim", "opaque": {"driver": "other", "parameters": foreign}},
    ]
    return claim


FOREIGN = [
    {"opaque": {"parameters": [1, {"]": "}"}]}},  # the cut's own words inside
    {"escaped": 'a "quoted" \\ back\\slash, [brackets] {braces}', "n": -1.5e3, "t": None},
    {},
]


@pytest.mark.parametrize("foreign", FOREIGN)
@pytest.mark.parametrize("indent", [None, 2])
def test_the_cut_claim_reads_as_the_plain_reader_reads_it(foreign: Any, indent: int | None) -> None:
    claim = _with_configs(foreign)
    read = claim_from_api(cut_document(json.dumps(claim, indent=indent).encode()))
    assert read.ref == claim_from_api(claim).ref
    assert read.allocation is not None
    texts = [c.parameters for c in (*read.spec.config, *read.allocation.config)]
    assert [json.loads(t) for t in texts] == [foreign, OURS, foreign]
    if indent is None:  # the text as sent (", " and ": "), not written again compact
        assert texts[0] == json.dumps(foreign)


def test_a_claim_without_configs_is_read_plainly() -> None:
    claim = allocated_claim("c", ["npu-0"])
    assert claim_from_json(json.dumps(claim).encode()) == claim_from_api(claim)


def test_parameters_the_json_reader_cannot_read_come_out_as_text() -> None:
    deep = b"[" * 5000 + b"]" * 5000
    raw = json.dumps(_with_configs(0)).encode()
    raw = raw.replace(b'"parameters": 0', b'"parameters": ' + deep)
    raw = raw.replace(b'"parameters": {"apiVersion"', b'"parameters": {"x": "\xff", "apiVersion"')
    read = claim_from_json(raw)
    assert read.allocation is not None
    other, ours = read.allocation.config[1], read.allocation.config[0]
    assert other.parameters == deep.decode()
    assert json.loads(ours.parameters)["x"] == "\ufffd"


def test_parameters_read_from_the_server_are_not_bounded_here() -> None:
    """The API server bounded them by its own measure; a parsed document (simulate's) is held
    to that bound instead, and refused over it."""
    claim = _with_configs({"x": "y" * 11_000})
    read = claim_from_json(json.dumps(claim).encode())
    assert json.loads(read.spec.config[0].parameters) == {"x": "y" * 11_000}
    with pytest.raises(ShapeError, match="at most 10240 bytes"):
        claim_from_api(claim)
