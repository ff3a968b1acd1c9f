"""The cel-expr-python environment a device selector compiles in, shaped like Kubernetes' own.

What Kubernetes v1.34.3 offers a new selector (k8s.io/apiserver@v0.34.3/pkg/cel/environment/
base.go at compatibility version 1.33, plus ext.Bindings from k8s.io/dynamic-resource-allocation@
v0.34.3/cel/compile.go): one variable, `device`; the runtime's own `cel.bind`, optional types,
sets, two-variable comprehensions and ext strings at version 2 (no `reverse`, added in version 3;
cel-go@v0.26.0/ext/strings.go); and Kubernetes' libraries, declared by declarations/. Not offered,
as there: ext lists (`sort`, `slice`, list `reverse`...), which 1.34 allows only in stored
expressions, and ext math. v1.36.3 (compatibility 1.35) adds ext lists (compatibility.py).

Known differences, all from the runtime: the format library's `format.named` (the other calls
are rewritten: format_library.py); `transformMap` and `transformMapEntry`, refused, as the
binding lacks their runtime helper `cel.@mapInsert` and cannot be given one (`all`, `exists`,
`existsOne` and `transformList` with two variables work; `exists_one` with two does not parse);
ext strings' `format` and
out-of-range `indexOf`, and ext lists' errors ("sort(): ..."), behave and read as the C++
library has them; `lists.range` of a negative number fails where cel-go gives `[]`. Kubernetes'
compile-time checks this runtime lacks are checking.py's.
"""

from collections.abc import Callable

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from npu_dra.adapters.cel.compatibility import DEFAULT, Compatibility
from npu_dra.adapters.cel.declarations import INCLUDES, MERGED, REDECLARED, ROWS, Row
from npu_dra.adapters.cel.messages import POOL
from npu_dra.adapters.cel.typed_device import device_pool, device_variables
from npu_dra.adapters.cel.values import from_cel, result_to_cel

STRINGS_VERSION = 2
# cel-go's lists extension at version 3 (base.go) has version 2's functions, with costs; the C++
# runtime's own lists extension at version 2 has the same functions.
_LISTS = '  - name: "lists"\n    version: 2\n'


def _config(compatibility: Compatibility) -> cel.EnvConfig:
    """The runtime's own sets, two-variable comprehensions and (1.36) lists, less the standard
    declarations that ROWS redeclares whole."""
    lists = _LISTS if compatibility.lists_extension else ""
    excluded = "".join(f'    - name: "{name}"\n' for name in REDECLARED)
    return cel.NewEnvConfigFromYaml(
        'extensions:\n  - name: "sets"\n  - name: "two-var-comprehensions"\n'
        f"{lists}stdlib:\n  exclude_functions:\n{excluded}"
    )


def _lifted(function: Callable[..., object]) -> Callable[..., object]:
    """Messages in, messages out: the library functions see only our Python value types."""

    def call(*arguments: object) -> object:
        return result_to_cel(function(*map(from_cel, arguments)))

    return call


def _overload(row: Row) -> cel.Overload:
    if row.implementation is None:
        return cel.Overload(row.overload_id, row.result, row.parameters, is_member=row.member)
    implementation = _lifted(row.implementation)
    return cel.Overload(row.overload_id, row.result, row.parameters, row.member, implementation)


def _declarations(rows: tuple[Row, ...]) -> list[cel.FunctionDecl]:
    overloads: dict[str, list[cel.Overload]] = {}
    for row in rows:
        overloads.setdefault(row.name, []).append(_overload(row))
    return [cel.FunctionDecl(name, group) for name, group in overloads.items()]


def build_environment(
    compatibility: Compatibility = DEFAULT, *, typed: bool = False, maps: bool = True
) -> cel.Env:
    """A fresh environment. Untyped (`device` is `dyn`), the evaluator runs every selector in
    it; typed, it only checks them, `device` typed as the API server types it (typed_device.py,
    which says what `maps` is)."""
    rows = ROWS + (INCLUDES if compatibility.list_type_attributes else ())
    if typed:
        pool = device_pool(compatibility.consumable_capacity)
        variables = device_variables(compatibility, maps=maps)
    else:
        pool, variables = POOL, {"device": cel.Type.DYN}
    return cel.NewEnv(
        pool,
        config=_config(compatibility),
        variables=variables,
        extensions=[
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(STRINGS_VERSION),
            # An extension's functions join the same names' (ext strings' indexOf); last.
            cel.CelExtension("kubernetes.lists", _declarations(MERGED)),
        ],
        functions=_declarations(rows),
    )
