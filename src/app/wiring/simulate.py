"""The simulation's own graph: the CEL selector evaluator, which only the simulation builds (its
nodes are ordinary node graphs over an in-memory cluster), so the plugins never import CEL."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_dra.domain.scheduling.ports import SelectorEvaluator


def selector_evaluator() -> "SelectorEvaluator":
    """The simulation's CEL evaluator (the plugins never evaluate selectors)."""
    from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator

    return CelSelectorEvaluator()
