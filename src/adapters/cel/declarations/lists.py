"""The lists library's signatures: typed for the checker, one implementation for the runtime.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/lists.go: `sum` over int, uint, double and
duration lists; `min`, `max` and `isSorted` over lists of any comparable type (those and bool,
timestamp, string, bytes); `indexOf` and `lastIndexOf` over a list and an element of its type.

The runtime keeps one implementation per name and argument kinds, and every list is one kind, so
`sum`, `min`, `max` and `isSorted` are each declared once per element type without an
implementation, and once more, with it, on a list of a type no value has (messages.py), typed
`dyn` (bool for `isSorted`), so that the runtime takes its result as whatever the elements
give. `indexOf` and `lastIndexOf` are also ext strings' functions, which a declaration of our
own may only join from an extension (see environment.py); an extension registers every
overload's runtime implementation, so each takes its own element kind: the comparable types,
lists and maps, all of which Kubernetes' one overload on any type covers. A list of messages
(quantities, versions, IPs) has no indexOf here, as every message is one kind and no one message
type may stand for all.
"""

from collections.abc import Callable

from cel_expr_python import cel

from npu_dra.adapters.cel import lists
from npu_dra.adapters.cel.declarations.row import Row
from npu_dra.adapters.cel.messages import ANY_ELEMENT

_T = cel.Type
_SUMMABLE = {"int": _T.INT, "uint": _T.UINT, "double": _T.DOUBLE, "duration": _T.DURATION}
_COMPARABLE = _SUMMABLE | {
    "bool": _T.BOOL,
    "timestamp": _T.TIMESTAMP,
    "string": _T.STRING,
    "bytes": _T.BYTES,
}
_CARRIER = [_T.List(ANY_ELEMENT)]


def _library(
    name: str, overload: str, kinds: dict[str, cel.Type], implementation: Callable[..., object]
) -> tuple[Row, ...]:
    """Kubernetes' overload ids: list_<type>_<name>_<type>, or list_<type>_is_sorted_bool."""
    carrier = Row(name, f"list_any_{name}", _CARRIER, _result(name, _T.DYN), True, implementation)
    typed = (
        Row(name, overload.format(kind), [_T.List(element)], _result(name, element), True, None)
        for kind, element in kinds.items()
    )
    return (carrier, *typed)


def _result(name: str, element: cel.Type) -> cel.Type:
    return _T.BOOL if name == "isSorted" else element


ROWS: tuple[Row, ...] = (
    *_library("sum", "list_{0}_sum_{0}", _SUMMABLE, lists.list_sum),
    *_library("min", "list_{0}_min_{0}", _COMPARABLE, lists.list_min),
    *_library("max", "list_{0}_max_{0}", _COMPARABLE, lists.list_max),
    *_library("isSorted", "list_{0}_is_sorted_bool", _COMPARABLE, lists.is_sorted),
)

# Joined to ext strings' indexOf and lastIndexOf, one overload per element kind.
_EQUATABLE = _COMPARABLE | {"list": _T.List(_T.DYN), "map": _T.Map(_T.DYN, _T.DYN)}
MERGED: tuple[Row, ...] = tuple(
    Row(name, f"list_{kind}_{overload}_int", [_T.List(element), element], _T.INT, True, function)
    for name, overload, function in (
        ("indexOf", "index_of", lists.index_of),
        ("lastIndexOf", "last_index_of", lists.last_index_of),
    )
    for kind, element in _EQUATABLE.items()
)

# DRAListTypeAttributes (dynamic-resource-allocation@v0.36.3 cel/compile.go): on any value.
INCLUDES: tuple[Row, ...] = (
    Row("includes", "dra_includes_dyn_dyn", [_T.DYN, _T.DYN], _T.BOOL, True, lists.includes),
)
