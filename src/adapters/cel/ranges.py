"""The one cost limit simulate checks: `lists.range(n)` (cel-go's lists extension, v1.36.3).

The API server refuses a selector whose estimated cost passes 1,000,000 (k8s.io/kubernetes
pkg/apis/resource CELSelectorExpressionMaxCost), "too complex, exceeds cost limit". cel-go@v0.26.0
ext/lists.go estimates `lists.range(n)` as n + 11 when n is an int literal (0 if negative) and
as unbounded otherwise, so `lists.range(size(x))` never compiles there. Other costs are not
estimated here. The rest of the expression adds its own cost, so a literal a little under the
limit may still be refused there and accepted here.
"""

import re

from npu_dra.adapters.cel.literals import STRING_LITERAL

_LIMIT = 1_000_000
_CALL_COST = 11  # the call, and common/cost.go ListCreateBaseCost
_INT = r"-?\s*(?:0[xX][0-9a-fA-F]+|\d+)"
# A literal on its own is the second alternative, so a call quoted inside one is never seen.
_SCAN = re.compile(rf"\blists\s*\.\s*range\s*\(\s*(?:(?P<literal>{_INT})\s*\))?|{STRING_LITERAL}")


def range_cost_error(expression: str) -> str | None:
    for call in _SCAN.finditer(expression):
        if not call.group(0).startswith("lists"):
            continue
        literal = call.group("literal")
        if literal is None or _size(literal) + _CALL_COST > _LIMIT:
            return "too complex, exceeds cost limit"
    return None


def _size(literal: str) -> int:
    text = literal.replace(" ", "")
    return max(int(text, 16 if "x" in text.lower() else 10), 0)
