"""Every flag of every `npu-dra` command, declared once, and the typed settings they make.

Split by concern: values.py (how flag and env text is parsed), option.py (the `Option`
declaration), the option tables node.py, kubelet.py, cluster.py, observability.py and
simulate.py, table.py (every option by name, each command's selection, `add_options`) and
settings.py (the frozen `Settings` the composition root reads, and the profile's rules applied
to them). Importing the package costs nothing but argparse and attrs, so `npu-dra --help`
answers at once. Everything other code uses is re-exported here.
"""

from npu_dra.app.options.option import Option
from npu_dra.app.options.settings import (
    HEALTHCHECK_HOST,
    QUIET_COMMANDS,
    QUIET_LOG_LEVEL,
    Settings,
    defaults,
    resolved,
    settings_from,
)
from npu_dra.app.options.simulate import SEARCH_BUDGET
from npu_dra.app.options.table import COMMANDS, OPTIONS, add_options
from npu_dra.app.options.values import (
    CLUSTERS,
    DEVICE_PROFILES,
    DEVICE_TAINTS,
    FALSE_WORDS,
    KUBELET_CALL_TIMEOUT_S,
    LOG_FORMATS,
    LOG_LEVELS,
    TRUE_WORDS,
    VNPU_MODES,
    Hardware,
    OptionError,
    claim_fetch_timeout,
    driver_mounts,
    hardware,
    one_of,
    optional_path,
    port,
    positive,
    positive_int,
    positive_seconds,
    switch,
    taint_effects,
    this_host,
)

__all__ = [
    "CLUSTERS",
    "COMMANDS",
    "DEVICE_PROFILES",
    "DEVICE_TAINTS",
    "FALSE_WORDS",
    "HEALTHCHECK_HOST",
    "KUBELET_CALL_TIMEOUT_S",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "OPTIONS",
    "QUIET_COMMANDS",
    "QUIET_LOG_LEVEL",
    "SEARCH_BUDGET",
    "TRUE_WORDS",
    "VNPU_MODES",
    "Hardware",
    "Option",
    "OptionError",
    "Settings",
    "add_options",
    "claim_fetch_timeout",
    "defaults",
    "driver_mounts",
    "hardware",
    "one_of",
    "optional_path",
    "port",
    "positive",
    "positive_int",
    "positive_seconds",
    "resolved",
    "settings_from",
    "switch",
    "taint_effects",
    "this_host",
]
