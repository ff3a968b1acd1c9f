"""One production evaluator for each module of library tests: it caches what it compiles."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator


@pytest.fixture(scope="module")
def evaluator() -> CelSelectorEvaluator:
    return CelSelectorEvaluator()
