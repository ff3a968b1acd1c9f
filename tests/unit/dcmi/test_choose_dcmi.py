"""`--hardware dcmi` and `--hardware auto` as choose.py builds them: auto takes DCMI where the
library loads and starts, npu-smi otherwise, and says which."""

import logging
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.choose import auto_probe, dcmi_probe
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.domain.ids import NodeName
from tests.support.dcmi_stub import StubHost, build_library

NODE = NodeName("node-a")


def _auto(host: StubHost, library: Path) -> object:
    paths = AscendHostPaths(dev_root=host.directory / "dev", npu_smi=host.directory / "none")
    return auto_probe(
        node=NODE,
        host=paths,
        library=library,
        sysfs_root=host.directory / "sys",
        npu_smi=lambda: host.npu_smi_probe(NODE),
    )


def test_auto_uses_dcmi_where_the_library_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = StubHost.from_scenario("310P3_300IDuo_3cards", tmp_path)
    with caplog.at_level(logging.INFO):
        chosen = _auto(host, build_library())
    assert isinstance(chosen, DcmiProbe)
    assert len(chosen.probe().devices) == 6
    assert "--hardware auto: using DCMI" in caplog.text


@pytest.mark.parametrize("broken", ["init", "absent"])
def test_auto_falls_back_to_npu_smi_saying_why(
    broken: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = StubHost.from_scenario("310P3_300IDuo_3cards", tmp_path)
    library = build_library() if broken == "init" else tmp_path / "absent" / "libdcmi.so"
    if broken == "init":
        host.set_init_rc(-8012)
    with caplog.at_level(logging.INFO):
        chosen = _auto(host, library)
    assert isinstance(chosen, NpuSmiProbe)
    assert len(chosen.probe().devices) == 6
    why = "dcmi_init: DCMI error -8012" if broken == "init" else str(library)
    assert "--hardware auto: using npu-smi, DCMI did not start" in caplog.text
    assert why in caplog.text


def test_auto_falls_back_when_the_first_dcmi_probe_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A library that starts but answers what npu-dra cannot use (here: an error count out of
    range) is not used: npu-smi serves, and the warning says why."""
    host = StubHost.from_scenario("310P3_300IDuo_3cards", tmp_path)
    host.set_error_count(100_000)
    with caplog.at_level(logging.INFO):
        chosen = _auto(host, build_library())
    assert isinstance(chosen, NpuSmiProbe)
    assert "--hardware auto: using npu-smi, probing through DCMI failed" in caplog.text
    assert "error count" in caplog.text


def test_dcmi_refuses_the_gpu_profile(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="gpu"):
        dcmi_probe(node=NODE, host=AscendHostPaths(), profile="gpu")
