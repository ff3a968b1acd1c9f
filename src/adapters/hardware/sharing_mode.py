"""The container-sharing mode of Ascend chips (npu-smi `device-share`), and fake hardware's.

Without it an Ascend chip's device node serves one container at a time; Huawei's device plugin
shares a chip (`-shareDevCount` 2-100) only once an operator has turned it on ("This function
depends on the driver enabling shared mode and setting device-share to true": mind-cluster
@ 22bb3d98, docs/en/scheduling/.../04_ascend_device_plugin.md, -shareDevCount). npu-dra turns it
on itself, per chip, before the first share of the chip is prepared.

Which chips have it: npu-smi's command table (verylucky01/driver @ e29d066f, a mirror of
Huawei's open-sourced driver: src/custom/dev_prod/user/npucli/src/npu_cmd_parse.c, "device-share"
for 310 SoC and station boards, 310B, 310P, 910B and 910_93 (A3); the driver builds the kernel
side only for 310P, 310B and 910B: dsmi_product_ext/CMakeLists.txt, CFG_FEATURE_DEVICE_SHARE).
910 (A) and 950 chips have none. Such a chip is not shared without the mode: a second container
opening its node would fail at start, long after the claim was answered. Preparing a share of it
fails instead, naming the chip's family (SharingModeUnsupported); the real adapters take that
answer from the hardware itself (npu-smi: "This device does not support ...", DCMI: -8255), since
support depends on the board (a 310 card has no mode, a 310 SoC has), and the fake from
`has_device_share`. The mode is never turned off by npu-dra: a reboot does that (DCMI's
dcmi_set_device_share_enable: "the container is disabled by default after system restart"),
and the restart repair turns it on again for chips whose shares are still prepared.
"""

import threading

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.profile import chip_family

SHARING_CHIPS = "310P, 310B, 910B and A3 chips"


class SharingModeUnsupported(ProbeError):
    """A chip without a container-sharing mode; the message names it and its family."""

    def __init__(self, device: Device, said: str) -> None:
        super().__init__(
            f"{device.name} ({device.chip_name}, {chip_family(device.chip_name)} family) has no "
            f"container-sharing mode ({said}); only {SHARING_CHIPS} can be shared: leave "
            f"{device.name} out of --shared-chips"
        )


def has_device_share(chip_name: str) -> bool:
    """Whether npu-smi offers `device-share` for chips of this name (module docstring): 310P,
    310B, 910B and A3 (whose npu-smi names its dies `Ascend910`); not 310 cards, 910 (A), 950."""
    bare = chip_name.removeprefix("Ascend")
    return bare.startswith(("310P", "310B", "910B")) or chip_name == "Ascend910"


class FakeSharingMode:
    """Fake hardware's sharing mode: which chips are in it (`on`), each turn-on in order
    (`turned_on`, what tests count), and `reboot`, which turns every chip's mode off."""

    def __init__(self) -> None:
        self.on: set[DeviceName] = set()
        self.turned_on: list[DeviceName] = []
        self._lock = threading.Lock()

    def enable_device_share(self, *, device: Device) -> bool:
        if not has_device_share(device.chip_name):
            raise SharingModeUnsupported(device, "fake hardware, as npu-smi's command table")
        with self._lock:
            if device.name in self.on:
                return False
            self.on.add(device.name)
            self.turned_on.append(device.name)
            return True

    def reboot(self) -> None:
        with self._lock:
            self.on.clear()
