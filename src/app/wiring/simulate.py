"""The simulation's own graph: the CEL selector evaluator, which only the simulation builds (its
nodes are ordinary node graphs over an in-memory cluster), so the plugins never import CEL."""

from typing import TYPE_CHECKING

from npu_dra.app.options import Settings

if TYPE_CHECKING:
    from npu_dra.domain.scheduling.ports import SelectorEvaluator


def selector_evaluator(settings: Settings) -> "SelectorEvaluator":
    """The simulation's CEL evaluator (the plugins never evaluate selectors), with the CEL
    environment of the simulated version and gates (`--kubernetes-version`, `--feature-gates`)."""
    from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator

    return CelSelectorEvaluator(settings.simulated)
