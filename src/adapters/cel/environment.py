"""The cel-expr-python environment a device selector compiles in, shaped like Kubernetes' own.

What Kubernetes v1.34.3 offers a new selector (k8s.io/apiserver@v0.34.3/pkg/cel/environment/
base.go at compatibility version 1.33, plus ext.Bindings from k8s.io/dynamic-resource-allocation@
v0.34.3/cel/compile.go): one variable, `device`; the runtime's own `cel.bind`, optional types,
sets, two-variable comprehensions and ext strings at version 2 (no `reverse`, added in version 3;
cel-go@v0.26.0/ext/strings.go); and Kubernetes' libraries, declared by declarations/. Not offered,
as there: ext lists (`sort`, `slice`, list `reverse`...), which 1.34 allows only in stored
expressions, and ext math.

Known differences, all from the runtime: the format library (optional results cannot be built)
and `optional.unwrap`; `transformMap` and `transformMapEntry`, refused, as the binding lacks
their runtime helper `cel.@mapInsert` (`all`, `exists`, `existsOne` and `transformList` with two
variables work; `exists_one` with two does not parse); ext strings' `format` and out-of-range
`indexOf` behave as the C++ library has them. Kubernetes' checks on literals, which this runtime
lacks, are literals.py's (arguments) and homogeneous.py's (mixed list and map literals).
"""

from collections.abc import Callable

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from npu_dra.adapters.cel.declarations import MERGED, REDECLARED, ROWS, Row
from npu_dra.adapters.cel.messages import POOL
from npu_dra.adapters.cel.values import from_cel, result_to_cel

STRINGS_VERSION = 2
# The runtime's own sets and two-variable comprehensions, less the standard declarations that
# ROWS redeclares whole.
_CONFIG = """
extensions:
  - name: "sets"
  - name: "two-var-comprehensions"
stdlib:
  exclude_functions:
""" + "".join(f'    - name: "{name}"\n' for name in REDECLARED)


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


def build_environment() -> cel.Env:
    """A fresh environment; the evaluator compiles every selector in one."""
    return cel.NewEnv(
        POOL,
        config=cel.NewEnvConfigFromYaml(_CONFIG),
        variables={"device": cel.Type.DYN},
        extensions=[
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(STRINGS_VERSION),
            # An extension's functions join the same names' (ext strings' indexOf); last.
            cel.CelExtension("kubernetes.lists", _declarations(MERGED)),
        ],
        functions=_declarations(ROWS),
    )
