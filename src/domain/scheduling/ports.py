"""The scheduling wing's port: evaluating a CEL device selector against a device's view."""

from typing import Protocol

from npu_dra.domain.scheduling.selectors import SelectorDevice


class SelectorEvaluator(Protocol):
    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        """Evaluate a CEL device selector; SelectorError if it fails or is not a bool."""
        ...

    def compile_error(self, *, expression: str) -> str | None:
        """Why the API server would refuse the selector (it compiles each on create), or None."""
        ...
