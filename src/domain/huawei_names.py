"""What Huawei's own Ascend DRA driver publishes and leaves on a node, so claims written for it
run unchanged on npu-dra and a node it still runs on is recognised.

Source: mind-cluster (github.com/Ascend/mind-cluster, master of 2026-11) component/
ascend-dynamic-resource-allocation:
- internal/device/generation_common.go: attributes `deviceType` (string) and `physicId` (int),
  set by generation_910.go / generation_950.go `DeviceAttributes` from the device manager's
  `GetDevType()` and the chip's physical id; devices named `Ascend910-<physicId>` (950:
  `npu-<physicId>`).
- pkg/consts/consts.go: driver `npu.huawei.com`, its checkpoint `checkpoint.json` in the plugin
  data directory; internal/plugin/checkpoint.go: that file is `{"checksum": N, "v1":
  {"preparedClaims": {...}}}` (Kubernetes' checkpointmanager layout).
The device type is the one `GetDevType` computes (component/ascend-common/devmanager/common/
utils.go `GetDevType`, `GetDeviceTypeByChipName`; api/default_name.go, devmanager/common/
utils_v2.go): an A3 board gives `Ascend910A3`, a chip name starting `Ascend950` gives
`Ascend910A5`, else the chip name decides: `^(310P\\d?|I2\\d?)` `Ascend310P`, containing `310B`
`Ascend310B`, containing `310` `Ascend310`, `^(910B\\d|A2G\\d)` `Ascend910B`, `^910` `Ascend910`.
An A3 die's npu-smi chip name is `Ascend910` (ascend-facts A.2), which no other chip has; our
950 chip names start `950` (adapters/hardware/chips.py) where DCMI's start `Ascend950`.
"""

import re

DEVICE_TYPE = "deviceType"
PHYSIC_ID = "physicId"
HUAWEI_CHECKPOINT = "checkpoint.json"

_BY_NAME = (
    (re.compile(r"^(310P\d?|I2\d?)"), "Ascend310P"),
    (re.compile(r"310B"), "Ascend310B"),
    (re.compile(r"310"), "Ascend310"),
    (re.compile(r"^(910B\d|A2G\d)"), "Ascend910B"),
    (re.compile(r"^910"), "Ascend910"),
)


def huawei_device_type(chip_name: str) -> str:
    """The `deviceType` Huawei's driver publishes for a chip npu-smi names `chip_name`; a chip
    its table does not know gets `Ascend` + the name (Huawei's driver refuses such a node)."""
    if chip_name == "Ascend910":
        return "Ascend910A3"
    if chip_name.startswith(("950", "Ascend950")):
        return "Ascend910A5"
    bare = chip_name.removeprefix("Ascend")
    for pattern, device_type in _BY_NAME:
        if pattern.search(bare):
            return device_type
    return f"Ascend{bare}"
