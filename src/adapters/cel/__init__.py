"""CEL device selectors: the SelectorEvaluator adapters.

`CelSelectorEvaluator` (C++ runtime) is the production adapter; `celpy_evaluator` holds the
pure-Python second adapter, imported from its module so that celpy stays a dev dependency.
"""

from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator

__all__ = ["CelSelectorEvaluator"]
