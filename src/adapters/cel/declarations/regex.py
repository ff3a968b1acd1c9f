"""The regex library's signatures (k8s.io/apiserver@v0.34.3/pkg/cel/library/regex.go)."""

from cel_expr_python import cel

from npu_dra.adapters.cel import regex
from npu_dra.adapters.cel.declarations.row import Row

_T = cel.Type
_S = _T.STRING

ROWS: tuple[Row, ...] = (
    Row("find", "string_find_string", [_S, _S], _S, True, regex.find),
    Row("findAll", "string_find_all_string", [_S, _S], _T.List(_S), True, regex.find_all),
    Row(
        "findAll", "string_find_all_string_int", [_S, _S, _T.INT], _T.List(_S), True, regex.find_all
    ),
)
