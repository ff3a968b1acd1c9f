"""`optional.unwrap` and `unwrapOpt`: the optional library's, declared here as the runtime lacks it.

cel-go@v0.26.0 cel/library.go (OptionalTypes version 2, which Kubernetes' base environment takes
at its latest) declares both on a `list(optional(T))`, giving a `list(T)`. The C++ runtime's
optional extension implements them but declares neither, and the binding cannot name an
optional type, so they are declared on `list(dyn)`: a list that is not of optionals compiles
here and fails when evaluated ("expected a list(optional(T))"), where it does not compile there.
"""

from cel_expr_python import cel

from npu_dra.adapters.cel.declarations.row import Row

_LIST = cel.Type.List(cel.Type.DYN)

ROWS: tuple[Row, ...] = (
    Row("optional.unwrap", "optional_unwrap", [_LIST], _LIST, False, None),
    Row("unwrapOpt", "optional_unwrapOpt", [_LIST], _LIST, True, None),
)
