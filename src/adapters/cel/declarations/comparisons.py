"""The ordering operators with Kubernetes' cross-type numeric comparisons (`1 < 1.5`).

Kubernetes' base environment enables cel.CrossTypeNumericComparisons from 1.28
(k8s.io/apiserver@v0.34.3/pkg/cel/environment/base.go): `<`, `<=`, `>` and `>=` take any two of
int, uint and double (cel-go@v0.26.0/common/stdlib/standard.go). The C++ runtime compares them
already; only its type checker lacks the overloads, so the environment leaves the standard
declarations out and declares them whole here, none with an implementation of its own.
"""

from cel_expr_python import cel

from npu_dra.adapters.cel.declarations.row import Row

_T = cel.Type
_OPERATORS = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_NUMBERS = {"int64": _T.INT, "uint64": _T.UINT, "double": _T.DOUBLE}
_OTHERS = {
    "bool": _T.BOOL,
    "string": _T.STRING,
    "bytes": _T.BYTES,
    "timestamp": _T.TIMESTAMP,
    "duration": _T.DURATION,
}


def _overloads(operator: str, stem: str) -> list[Row]:
    """cel-go's overload ids: less_int64, less_int64_double, ..."""
    rows = [
        Row(operator, f"{stem}_{kind}", [type_, type_], _T.BOOL, False, None)
        for kind, type_ in (_NUMBERS | _OTHERS).items()
    ]
    rows += [
        Row(
            operator,
            f"{stem}_{left}_{right}",
            [_NUMBERS[left], _NUMBERS[right]],
            _T.BOOL,
            False,
            None,
        )
        for left in _NUMBERS
        for right in _NUMBERS
        if left != right
    ]
    return rows


OPERATORS = tuple(_OPERATORS)
ROWS: tuple[Row, ...] = tuple(
    row for operator, stem in _OPERATORS.items() for row in _overloads(operator, stem)
)
