"""The cel-expr-python environment a device selector compiles in, shaped like Kubernetes' own.

One variable, `device` (dynamic: its maps are built per device), the `cel.bind`, optional and
strings extensions, and the quantity and semver libraries with their Kubernetes signatures. The
C++ runtime registers one implementation per argument *kind*, and every message is the same
kind, so an overload that differs from an earlier one only in message type (`compareTo` on
versions after `compareTo` on quantities) is declared for the type checker but carries no
implementation of its own: the shared one dispatches on the Python type.
"""

from collections.abc import Callable, Sequence

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from npu_dra.adapters.cel.library import FUNCTIONS
from npu_dra.adapters.cel.values import POOL, QUANTITY, SEMVER, from_cel, to_cel

_T = cel.Type
_Q, _S = QUANTITY, SEMVER
# (CEL name, overload id, parameters, result, is a method, shares an earlier implementation)
_Row = tuple[str, str, Sequence[cel.Type], cel.Type, bool, bool]
_ROWS: tuple[_Row, ...] = (
    ("quantity", "quantity_string", [_T.STRING], _Q, False, False),
    ("isQuantity", "is_quantity_string", [_T.STRING], _T.BOOL, False, False),
    ("sign", "quantity_sign", [_Q], _T.INT, True, False),
    ("isInteger", "quantity_is_integer", [_Q], _T.BOOL, True, False),
    ("asInteger", "quantity_as_integer", [_Q], _T.INT, True, False),
    ("asApproximateFloat", "quantity_as_approximate_float", [_Q], _T.DOUBLE, True, False),
    ("add", "quantity_add_quantity", [_Q, _Q], _Q, True, False),
    ("add", "quantity_add_int", [_Q, _T.INT], _Q, True, False),
    ("sub", "quantity_sub_quantity", [_Q, _Q], _Q, True, False),
    ("sub", "quantity_sub_int", [_Q, _T.INT], _Q, True, False),
    ("semver", "semver_string", [_T.STRING], _S, False, False),
    ("semver", "semver_string_bool", [_T.STRING, _T.BOOL], _S, False, False),
    ("isSemver", "is_semver_string", [_T.STRING], _T.BOOL, False, False),
    ("isSemver", "is_semver_string_bool", [_T.STRING, _T.BOOL], _T.BOOL, False, False),
    ("major", "semver_major", [_S], _T.INT, True, False),
    ("minor", "semver_minor", [_S], _T.INT, True, False),
    ("patch", "semver_patch", [_S], _T.INT, True, False),
    ("compareTo", "quantity_compare_to", [_Q, _Q], _T.INT, True, False),
    ("compareTo", "semver_compare_to", [_S, _S], _T.INT, True, True),
    ("isGreaterThan", "quantity_is_greater_than", [_Q, _Q], _T.BOOL, True, False),
    ("isGreaterThan", "semver_is_greater_than", [_S, _S], _T.BOOL, True, True),
    ("isLessThan", "quantity_is_less_than", [_Q, _Q], _T.BOOL, True, False),
    ("isLessThan", "semver_is_less_than", [_S, _S], _T.BOOL, True, True),
)


def _lifted(function: Callable[..., object]) -> Callable[..., object]:
    """Messages in, messages out: the library functions see only Quantity and Semver."""

    def call(*arguments: object) -> object:
        return to_cel(function(*map(from_cel, arguments)))  # type: ignore[arg-type]

    return call


def _overload(row: _Row) -> cel.Overload:
    name, overload_id, parameters, result, member, shared = row
    if shared:
        return cel.Overload(overload_id, result, parameters, is_member=member)
    return cel.Overload(overload_id, result, parameters, member, _lifted(FUNCTIONS[name]))


def _declarations() -> list[cel.FunctionDecl]:
    overloads: dict[str, list[cel.Overload]] = {}
    for row in _ROWS:
        overloads.setdefault(row[0], []).append(_overload(row))
    return [cel.FunctionDecl(name, group) for name, group in overloads.items()]


def build_environment() -> cel.Env:
    """A fresh environment; the evaluator compiles every selector in one."""
    return cel.NewEnv(
        POOL,
        variables={"device": _T.DYN},
        extensions=[
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(),
        ],
        functions=_declarations(),
    )
