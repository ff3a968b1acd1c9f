"""npu-smi adapter tests share the recorded outputs and the fake npu-smi in tests/support."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
