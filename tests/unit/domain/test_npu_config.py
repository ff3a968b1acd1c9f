"""NpuConfig v1alpha1: decoded strictly (every bad form names its field, in the admission
policy's words), resolved per result by precedence, and held against what was allocated."""

import json
import sys
from typing import Any

import pytest

from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    ConfigSource,
    DeviceRequest,
    OpaqueConfig,
    ResourceClaim,
)
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    PoolName,
    RequestName,
)
from npu_dra.domain.metrics import error_reason
from npu_dra.domain.npu_config import (
    API_VERSION,
    KIND,
    ConfigError,
    NpuConfig,
    SharingStrategy,
    check_claim_configs,
    check_strategy,
    config_for,
    decode,
    entry_for,
    is_share,
)

DRIVER = DriverName("npu.huawei.com")
OTHER = DriverName("gpu.example.com")
CLASS, CLAIM = ConfigSource.CLASS, ConfigSource.CLAIM
HEAD = {"apiVersion": API_VERSION, "kind": KIND}
REF = ClaimRef(Namespace("team-a"), ClaimName("train"), ClaimUID("uid-1"))


def text(**fields: Any) -> str:
    return json.dumps({**HEAD, **fields})


def entry(
    source: ConfigSource = CLAIM,
    *requests: str,
    driver: DriverName = DRIVER,
    strategy: str | None = "Exclusive",
) -> OpaqueConfig:
    parameters = text(sharing={"strategy": strategy}) if strategy else text()
    return OpaqueConfig(source, driver, parameters, tuple(RequestName(r) for r in requests))


def result(device: str = "npu-0", request: str = "npu", share_id: str | None = None) -> Any:
    return AllocationResult(
        RequestName(request), DRIVER, PoolName("node-a"), DeviceName(device), share_id=share_id
    )


def allocated(*results: AllocationResult, config: tuple[OpaqueConfig, ...]) -> ResourceClaim:
    spec = ClaimSpec((DeviceRequest(RequestName("npu"), DeviceClassName("npu")),))
    return ResourceClaim(REF, spec, Allocation(results, config=config))


def test_the_smallest_config_is_apiversion_and_kind_and_leaves_sharing_unset() -> None:
    assert decode(text()) == NpuConfig()


@pytest.mark.parametrize("strategy", list(SharingStrategy))
def test_each_strategy_decodes(strategy: SharingStrategy) -> None:
    assert decode(text(sharing={"strategy": strategy.value})) == NpuConfig(strategy)


@pytest.mark.parametrize(
    ("parameters", "field", "reason"),
    [
        ({"kind": KIND}, "apiVersion", "required, npu.huawei.com/v1alpha1"),
        ({**HEAD, "apiVersion": "v1"}, "apiVersion", '"v1" is not npu.huawei.com/v1alpha1'),
        ({**HEAD, "apiVersion": 1}, "apiVersion", "must be the string npu.huawei.com/v1alpha1"),
        ({"apiVersion": API_VERSION}, "kind", "required, NpuConfig"),
        ({**HEAD, "kind": "GpuConfig"}, "kind", '"GpuConfig" is not NpuConfig'),
        ({**HEAD, "shairng": {}}, "shairng", "unknown field (NpuConfig has"),
        ({**HEAD, "zz": 1, "aa": 2}, "aa", "unknown field"),
        ({**HEAD, "sharing": "Exclusive"}, "sharing", "must be an object with strategy"),
        ({**HEAD, "sharing": None}, "sharing", "must be an object with strategy"),
        ({**HEAD, "sharing": {}}, "sharing.strategy", "required, Exclusive or Shared"),
        (
            {**HEAD, "sharing": {"stratgy": "Shared"}},
            "sharing.stratgy",
            "unknown field (sharing has strategy only)",
        ),
        (
            {**HEAD, "sharing": {"strategy": "Shared", "memory": "8Gi"}},
            "sharing.memory",
            "unknown field",
        ),
        (
            {**HEAD, "sharing": {"strategy": "Sometimes"}},
            "sharing.strategy",
            '"Sometimes" is not Exclusive or Shared',
        ),
        (
            {**HEAD, "sharing": {"strategy": "exclusive"}},
            "sharing.strategy",
            '"exclusive" is not',
        ),
        ({**HEAD, "sharing": {"strategy": True}}, "sharing.strategy", "must be the string"),
    ],
)
def test_every_bad_form_names_its_field(parameters: Any, field: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        decode(json.dumps(parameters))
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"NpuConfig field {field}: ")


@pytest.mark.parametrize("parameters", ["[]", '"x"', "not json", "null"])
def test_parameters_that_are_not_an_object_are_refused(parameters: str) -> None:
    with pytest.raises(ConfigError, match="parameters are not a JSON object"):
        decode(parameters)


def test_parameters_past_the_api_servers_10_kib_are_refused_unread() -> None:
    with pytest.raises(ConfigError, match="larger than 10240 bytes"):
        decode(text(pad="x" * 10_240))


def test_a_long_value_is_cut_short_in_the_message() -> None:
    with pytest.raises(ConfigError) as caught:
        decode(text(sharing={"strategy": "S" * 5_000}))
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    ("configs", "request_name", "chosen"),
    [
        ([entry(CLASS), entry(CLASS, "npu"), entry(CLAIM), entry(CLAIM, "npu")], "npu", 3),
        ([entry(CLAIM, "npu"), entry(CLAIM), entry(CLASS, "npu"), entry(CLASS)], "npu", 0),
        ([entry(CLASS, "npu"), entry(CLAIM), entry(CLASS)], "npu", 1),
        ([entry(CLASS, "npu"), entry(CLASS)], "npu", 0),
        ([entry(CLASS), entry(CLASS, "npu")], "npu", 1),
        ([entry(CLAIM), entry(CLAIM)], "npu", 1),  # alike: the later
        ([entry(CLAIM, "other"), entry(CLASS)], "npu", 1),  # names another request
        ([entry(CLAIM, "npu", driver=OTHER), entry(CLASS)], "npu", 1),  # another driver's
        ([entry(CLAIM, "npu", driver=OTHER)], "npu", None),
        ([], "npu", None),
        ([entry(CLAIM, "npu"), entry(CLASS, "npu/small")], "npu/small", 0),
        ([entry(CLAIM, "npu/big"), entry(CLASS, "npu/small")], "npu/small", 1),
        ([entry(CLAIM), entry(CLAIM, "npu/small")], "npu/small", 1),
    ],
)
def test_the_most_specific_applicable_entry_wins(
    configs: list[OpaqueConfig], request_name: str, chosen: int | None
) -> None:
    assert entry_for(RequestName(request_name), configs, DRIVER) == chosen


def test_the_winner_applies_whole_without_merging_fields() -> None:
    configs = [entry(CLASS, strategy="Shared"), entry(CLAIM, strategy=None)]
    assert config_for(RequestName("npu"), configs, DRIVER) == NpuConfig()


def test_no_applicable_entry_leaves_sharing_unset() -> None:
    assert config_for(RequestName("npu"), [entry(driver=OTHER)], DRIVER) == NpuConfig()


def test_an_invalid_winner_is_named_by_its_index_and_source() -> None:
    configs = [entry(CLASS), entry(CLAIM, strategy="Sometimes")]
    with pytest.raises(ConfigError) as caught:
        config_for(RequestName("npu"), configs, DRIVER)
    assert str(caught.value) == (
        'config[1] (FromClaim) field sharing.strategy: "Sometimes" is not Exclusive or Shared'
    )


def test_a_share_is_a_share_id_or_a_fixed_share_device() -> None:
    assert is_share(result(share_id="a1b2"))
    assert is_share(result("npu-0-share-3"))
    assert not is_share(result("npu-0"))
    assert not is_share(result("npu-0-vir05-1c-16g-0"))


@pytest.mark.parametrize(
    ("strategy", "allowed", "refused"),
    [
        (SharingStrategy.EXCLUSIVE, [result()], [result(share_id="s"), result("npu-1-share-0")]),
        (SharingStrategy.SHARED, [result(share_id="s"), result("npu-1-share-0")], [result()]),
        (None, [result(), result(share_id="s"), result("npu-1-share-0")], []),
    ],
)
def test_a_strategy_allows_only_its_kind_of_device(
    strategy: SharingStrategy | None, allowed: list[AllocationResult], refused: list[Any]
) -> None:
    for ok in allowed:
        check_strategy(NpuConfig(strategy), ok)
    for bad in refused:
        with pytest.raises(ConfigError) as caught:
            check_strategy(NpuConfig(strategy), bad)
        assert caught.value.field == "sharing.strategy"


def test_a_claims_invalid_entry_is_named_with_the_claim_index_source_and_field() -> None:
    claim = allocated(result(), config=(entry(CLASS, "npu"), entry(CLAIM, strategy="Sometimes")))
    with pytest.raises(ConfigError) as caught:
        check_claim_configs(claim, DRIVER)
    assert str(caught.value) == (
        'claim team-a/train (uid-1): config[1] (FromClaim) field sharing.strategy: "Sometimes" '
        "is not Exclusive or Shared"
    )


def test_an_entry_of_another_driver_is_never_read() -> None:
    foreign = OpaqueConfig(CLAIM, OTHER, '{"anything": ["goes"]}')
    check_claim_configs(allocated(result(), config=(foreign,)), DRIVER)


def test_an_unmet_strategy_names_the_request_the_device_and_the_entry() -> None:
    claim = allocated(result("npu-2"), config=(entry(CLASS, "npu", strategy="Shared"),))
    with pytest.raises(ConfigError) as caught:
        check_claim_configs(claim, DRIVER)
    message = str(caught.value)
    assert message.startswith(
        "claim team-a/train (uid-1), request 'npu', device 'npu-2': config[0] (FromClass) "
        "field sharing.strategy: Shared needs a share of a shared chip"
    )


def test_a_met_strategy_and_an_unallocated_claim_pass() -> None:
    check_claim_configs(allocated(result(), config=(entry(CLAIM),)), DRIVER)
    check_claim_configs(ResourceClaim(REF, ClaimSpec(())), DRIVER)


@pytest.mark.parametrize(
    "claim",
    [
        allocated(result(), config=(entry(strategy="Sometimes"),)),
        allocated(result(), config=(OpaqueConfig(CLAIM, DRIVER, text(x=1)),)),
        allocated(result(share_id="s"), config=(entry(),)),
        allocated(result("npu-0"), config=(entry(strategy="Shared"),)),
    ],
)
def test_every_config_failure_is_counted_and_evented_as_bad_config(claim: ResourceClaim) -> None:
    with pytest.raises(ConfigError) as caught:
        check_claim_configs(claim, DRIVER)
    assert error_reason(str(caught.value)) == "bad_config"


@pytest.mark.parametrize("recursion_limit", [1_000, 100_000])
def test_deep_parameters_are_refused_whatever_the_recursion_limit(recursion_limit: int) -> None:
    """The depth is counted: a process whose recursion limit another part raised (simulate
    does, for deep snapshots) refuses the same parameters with the same reason."""
    deep = '{"apiVersion":"npu.huawei.com/v1alpha1","kind":"NpuConfig","sharing":'
    deep += "[" * 1_200 + "]" * 1_200 + "}"
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(recursion_limit)
    try:
        with pytest.raises(ConfigError, match="nested deeper than an NpuConfig can be"):
            decode(deep)
    finally:
        sys.setrecursionlimit(before)


def test_brackets_inside_strings_are_not_nesting() -> None:
    brackets = '"' + "[{" * 40 + '\\"' + "[" * 40 + '"'
    text = '{"apiVersion":"npu.huawei.com/v1alpha1","kind":"NpuConfig","x":' + brackets + "}"
    with pytest.raises(ConfigError, match="x"):  # refused for the unknown field, not the depth
        decode(text)
