"""The quantity and semver libraries' signatures.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/quantity.go and semverlib.go (SemverLib at
version 1, which adds the normalizing `semver(string, bool)` and `isSemver(string, bool)`).
"""

from cel_expr_python import cel

from npu_dra.adapters.cel.declarations.row import Row
from npu_dra.adapters.cel.library import FUNCTIONS
from npu_dra.adapters.cel.messages import QUANTITY, SEMVER

_T = cel.Type
_Q, _S = QUANTITY, SEMVER
_SHARED = None  # the implementation of the same name's quantity overload, above it


def _row(name: str, overload_id: str, parameters: list[cel.Type], result: cel.Type) -> Row:
    member = parameters[0] in (_Q, _S)
    return Row(name, overload_id, parameters, result, member, FUNCTIONS[name])


ROWS: tuple[Row, ...] = (
    _row("quantity", "quantity_string", [_T.STRING], _Q),
    _row("isQuantity", "is_quantity_string", [_T.STRING], _T.BOOL),
    _row("sign", "quantity_sign", [_Q], _T.INT),
    _row("isInteger", "quantity_is_integer", [_Q], _T.BOOL),
    _row("asInteger", "quantity_as_integer", [_Q], _T.INT),
    _row("asApproximateFloat", "quantity_as_approximate_float", [_Q], _T.DOUBLE),
    _row("add", "quantity_add_quantity", [_Q, _Q], _Q),
    _row("add", "quantity_add_int", [_Q, _T.INT], _Q),
    _row("sub", "quantity_sub_quantity", [_Q, _Q], _Q),
    _row("sub", "quantity_sub_int", [_Q, _T.INT], _Q),
    _row("semver", "semver_string", [_T.STRING], _S),
    _row("semver", "semver_string_bool", [_T.STRING, _T.BOOL], _S),
    _row("isSemver", "is_semver_string", [_T.STRING], _T.BOOL),
    _row("isSemver", "is_semver_string_bool", [_T.STRING, _T.BOOL], _T.BOOL),
    _row("major", "semver_major", [_S], _T.INT),
    _row("minor", "semver_minor", [_S], _T.INT),
    _row("patch", "semver_patch", [_S], _T.INT),
    _row("compareTo", "quantity_compare_to", [_Q, _Q], _T.INT),
    Row("compareTo", "semver_compare_to", [_S, _S], _T.INT, True, _SHARED),
    _row("isGreaterThan", "quantity_is_greater_than", [_Q, _Q], _T.BOOL),
    Row("isGreaterThan", "semver_is_greater_than", [_S, _S], _T.BOOL, True, _SHARED),
    _row("isLessThan", "quantity_is_less_than", [_Q, _Q], _T.BOOL),
    Row("isLessThan", "semver_is_less_than", [_S, _S], _T.BOOL, True, _SHARED),
)
