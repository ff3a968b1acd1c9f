"""A compile error at an expression of the checked AST, displayed as cel-go displays issues.

cel-go@v0.26.0 common/error.go: `ERROR: <input>:line:column: message`, then the source line and
a caret under the column (`.` for each character before it). The offset of each expression is
the checked AST's `source_info.positions`; `line_offsets` holds where each line after the first
starts.
"""

import bisect
from typing import Any


def issue(source_info: Any, expression: str, expr_id: int, message: str) -> str:
    offset = next((p.value for p in source_info.positions if p.key == expr_id), 0)
    starts = [0, *source_info.line_offsets]
    line = bisect.bisect_right(starts, offset)
    column = offset - starts[line - 1]
    text = expression.split("\n")[line - 1] if line <= expression.count("\n") + 1 else ""
    snippet = text.replace("\t", " ")
    return f"ERROR: <input>:{line}:{column + 1}: {message}\n | {snippet}\n | {'.' * column}^"
