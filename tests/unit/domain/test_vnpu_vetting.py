"""What npu-smi offers, vetted: a template or a chip's totals that make no good devices are left
out with the reason, the rest is offered, and an offer holds its bounds by construction."""

import pytest

from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.vnpu.instance import IDS_PER_CHIP, id_range
from npu_dra.domain.vnpu.layout import chip_layout
from npu_dra.domain.vnpu.templates import (
    MAX_COUNTER_TOTAL,
    MAX_TEMPLATES,
    MAX_VNPU_DEVICES_PER_CHIP,
    Template,
    VnpuOffer,
    shown,
)
from npu_dra.domain.vnpu.vetting import MAX_TEMPLATE_NAME, vet_offer, vet_templates

NEEDS = {"aicore": 5, "memory": 8}
TOTALS = {"aicore": 20, "memory": 32}
CHIP = DeviceName("npu-0")


def t(name: str, **needs: int) -> Template:
    return Template(name, needs or NEEDS)


def test_a_name_that_makes_no_device_name_is_left_out_and_the_others_kept() -> None:
    vetted = vet_templates([t("vir05_1c_8g"), t("vir05.1c 8g"), t("vir10_3c_16g")])
    assert [x.name for x in vetted.templates] == ["vir05_1c_8g", "vir10_3c_16g"]
    (problem,) = vetted.problems
    assert problem.startswith("template 'vir05.1c 8g': makes no device name")


def test_a_10_kb_name_is_left_out_and_quoted_short() -> None:
    vetted = vet_templates([t("v" * 10240), t("vir05_1c_8g")])
    assert [x.name for x in vetted.templates] == ["vir05_1c_8g"]
    (problem,) = vetted.problems
    assert f"longer than {MAX_TEMPLATE_NAME} characters" in problem
    assert "(10240 characters)" in problem
    assert len(problem) < 300


def test_names_differing_by_case_dash_or_underscore_keep_the_first() -> None:
    names = ["vir05_1c_8g", "VIR05_1C_8G", "vir05-1c-8g", "vir05_1c_8g"]
    vetted = vet_templates([t(n) for n in names])
    assert [x.name for x in vetted.templates] == ["vir05_1c_8g"]
    assert len(vetted.problems) == 3
    assert all("same device names as 'vir05_1c_8g'" in p for p in vetted.problems)


def test_templates_past_the_bound_are_left_out() -> None:
    vetted = vet_templates([t(f"vir{i:03d}") for i in range(MAX_TEMPLATES + 2)])
    assert len(vetted.templates) == MAX_TEMPLATES
    assert [p.split(":")[0] for p in vetted.problems] == [
        f"template 'vir{MAX_TEMPLATES:03d}'",
        f"template 'vir{MAX_TEMPLATES + 1:03d}'",
    ]


def test_placements_never_pass_the_ids_of_one_chip() -> None:
    offer = VnpuOffer({"aicore": 10**5, "memory": 10**5}, (t("vir01", aicore=1),))
    assert offer.placements(offer.templates[0]) == IDS_PER_CHIP


def test_wild_totals_leave_the_chip_whole_with_the_chip_named() -> None:
    vetted = vet_offer(CHIP, {"aicore": 10**12, "memory": 32}, [t("vir05_1c_8g")])
    assert vetted.offer is None
    (problem,) = vetted.problems
    assert problem.startswith("npu-0: chip totals: aicore 1000000000000 over the bound")
    assert problem.endswith("the chip is published whole")


def test_templates_past_the_device_cap_are_left_out_the_first_ones_kept() -> None:
    totals = {"aicore": MAX_COUNTER_TOTAL, "memory": MAX_COUNTER_TOTAL}
    templates = [t(f"vir{i:02d}", aicore=1) for i in range(MAX_TEMPLATES)]
    vetted = vet_offer(CHIP, totals, templates)
    assert vetted.offer is not None
    kept = MAX_VNPU_DEVICES_PER_CHIP // IDS_PER_CHIP
    assert [x.name for x in vetted.offer.templates] == [f"vir{i:02d}" for i in range(kept)]
    assert len(vetted.problems) == MAX_TEMPLATES - kept
    assert f"pass the {MAX_VNPU_DEVICES_PER_CHIP} one chip publishes" in vetted.problems[0]
    assert len(chip_layout(CHIP, vetted.offer).vnpu_devices) <= MAX_VNPU_DEVICES_PER_CHIP


def test_a_name_too_long_beside_a_long_chip_name_is_left_out_on_that_chip() -> None:
    long_chip = DeviceName("npu-" + "1" * 40)
    name = "vir05_1c_8g_" + "x" * 20
    assert vet_offer(CHIP, TOTALS, [t(name)]).problems == ()
    vetted = vet_offer(long_chip, TOTALS, [t(name)])
    assert vetted.offer is not None
    assert vetted.offer.templates == ()
    assert "is too long" in vetted.problems[0]


def test_a_vetted_offer_lays_out_without_error() -> None:
    vetted = vet_offer(CHIP, TOTALS, [t("vir05_1c_8g"), t("bad.name"), t("VIR05_1C_8G")])
    assert vetted.offer is not None
    names = [d.name for d in chip_layout(CHIP, vetted.offer).vnpu_devices]
    assert names == [f"npu-0-vir05-1c-8g-{i}" for i in range(4)]


def test_an_offer_refuses_what_vetting_leaves_out() -> None:
    with pytest.raises(InventoryError, match="over the bound"):
        VnpuOffer({"aicore": MAX_COUNTER_TOTAL + 1})
    with pytest.raises(InventoryError, match="over the bound"):
        Template("vir01", {"aicore": MAX_COUNTER_TOTAL + 1})
    with pytest.raises(InventoryError, match="make the same device names"):
        VnpuOffer(TOTALS, (t("vir05_1c_8g"), t("VIR05-1C-8G")))
    many = tuple(t(f"v{i}", aicore=1) for i in range(MAX_TEMPLATES))
    with pytest.raises(InventoryError, match="one chip publishes at most"):
        VnpuOffer({"aicore": MAX_COUNTER_TOTAL}, many)


def test_errors_quote_at_most_200_characters_of_a_name() -> None:
    with pytest.raises(InventoryError) as raised:
        Template("n" * 10**6, {"memory": 1})
    assert len(str(raised.value)) < 300
    assert shown("short") == "'short'"


def test_a_310p_chip_holds_no_more_of_a_template_than_its_8_ids() -> None:
    big = {"aicore": 10**5, "memory": 10**5}
    ids = len(id_range(0, chip_name="310P3"))
    vetted = vet_offer(CHIP, big, [t("vir01", aicore=1)], ids=ids)
    assert vetted.offer is not None
    assert vetted.offer.placements(vetted.offer.templates[0]) == ids == 8
