"""`python -m npu_dra.contract MODULE:FACTORY [MODULE:FACTORY...] [-- pytest args]`.

FACTORY() returns a HardwareProbe, or a `npu_dra.contract.HardwareBackend` to run the failure
rules too. The current directory is importable, so `mypkg.contract:factory` needs no install.
Built in: `npu_dra.contract.backends:nvml` (this machine's GPUs through NVML).
"""

import os
import sys
from pathlib import Path

import pytest

from npu_dra.contract import suite


def main(argv: list[str]) -> int:
    specs = [a for a in argv if ":" in a and not a.startswith("-")]
    extra = [a for a in argv if a not in specs and a != "--"]
    if not specs:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ[suite.BACKENDS_ENV] = ",".join(specs)
    sys.path.insert(0, os.getcwd())
    args = [str(Path(suite.__file__)), "-p", "no:cacheprovider", "-v", "-rs", "--tb=short", *extra]
    return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
