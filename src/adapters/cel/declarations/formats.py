"""The format library's one declared function (format_library.py says why it is rewritten to it):
`npu_dra_format_errors(name, value)`, the validation errors of `value` in the named format."""

from cel_expr_python import cel

from npu_dra.adapters.cel import format_library
from npu_dra.adapters.cel.declarations.row import Row

_S = cel.Type.STRING

ROWS: tuple[Row, ...] = (
    Row(
        format_library.FUNCTION,
        "npu_dra_format_errors_string_string",
        [_S, _S],
        cel.Type.List(_S),
        False,
        format_library.format_errors,
    ),
)
