"""CEL selector outcomes per (expression, device), remembered for a whole simulation.

A published device never changes during a run and a selector sees only the device, so each
pair is evaluated once; a runtime error is remembered as its message, like a result.
"""

import attrs

from npu_dra.domain.errors import SelectorError
from npu_dra.domain.scheduling.pools import Candidate, DeviceKey
from npu_dra.domain.scheduling.ports import SelectorEvaluator
from npu_dra.domain.scheduling.selectors import SelectorDevice, selector_view


@attrs.define
class Matcher:
    evaluator: SelectorEvaluator
    _outcomes: dict[tuple[str, DeviceKey], bool | str] = attrs.Factory(dict)
    _views: dict[DeviceKey, SelectorDevice] = attrs.Factory(dict)

    def outcome(self, expression: str, candidate: Candidate) -> bool | str:
        """True/False, or the error's reason when evaluating the selector failed."""
        found = self._outcomes.get((expression, candidate.key))
        if found is None:
            found = self._evaluate(expression, candidate)
            self._outcomes[(expression, candidate.key)] = found
        return found

    def _evaluate(self, expression: str, candidate: Candidate) -> bool | str:
        view = self._views.get(candidate.key)
        if view is None:
            view = selector_view(candidate.device, candidate.driver)
            self._views[candidate.key] = view
        try:
            return self.evaluator.matches(expression=expression, device=view)
        except SelectorError as error:
            return error.reason
