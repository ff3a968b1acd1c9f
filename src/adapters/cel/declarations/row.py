"""One typed overload of a Kubernetes CEL library function, as the C++ environment declares it."""

from collections.abc import Callable, Sequence
from typing import NamedTuple

from cel_expr_python import cel


class Row(NamedTuple):
    """`implementation` None: the runtime already has one for these argument kinds.

    The C++ runtime keeps one implementation per function name and argument *kinds*, and every
    message is the same kind, so an overload on a second message type (`compareTo` on versions
    after `compareTo` on quantities) is declared for the type checker only and shares the
    earlier implementation, which dispatches on the Python type. The standard `string()`
    overloads are declared the same way: the runtime's built-ins implement them.
    """

    name: str
    overload_id: str
    parameters: Sequence[cel.Type]
    result: cel.Type
    member: bool
    implementation: Callable[..., object] | None
