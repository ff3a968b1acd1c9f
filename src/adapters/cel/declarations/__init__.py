"""The typed overloads of Kubernetes' own CEL libraries, one module per library.

Kubernetes v1.34.3 validates a new selector in its CEL base environment at compatibility version
1.33 (k8s.io/apiserver@v0.34.3/pkg/cel/environment/base.go, DefaultCompatibilityVersion: the
binary's version less one), which holds quantity, semver, lists, regex, url, ip, cidr and format.
Format's functions return optional values, and this runtime's binding can neither name an
optional type (`cel.Type` makes an opaque one of any signature) nor return an optional value
from a Python function: formats.py declares the function its calls are rewritten to
(format_library.py). optionals.py declares two functions the runtime has without declaring.
The extensions the environment takes from the runtime itself are environment.py's.
"""

from npu_dra.adapters.cel.declarations import (
    comparisons,
    formats,
    lists,
    network,
    optionals,
    quantity,
    regex,
)
from npu_dra.adapters.cel.declarations.row import Row

ROWS: tuple[Row, ...] = (
    quantity.ROWS
    + lists.ROWS
    + regex.ROWS
    + network.ROWS
    + comparisons.ROWS
    + optionals.ROWS
    + formats.ROWS
)
# Joined, from an extension, to functions the runtime's own extensions declare.
MERGED: tuple[Row, ...] = lists.MERGED
# Only with DRAListTypeAttributes (compatibility.py).
INCLUDES: tuple[Row, ...] = lists.INCLUDES
# Standard functions that ROWS declares whole, the runtime's declarations of them left out.
REDECLARED: tuple[str, ...] = ("string", *comparisons.OPERATORS)

__all__ = ["INCLUDES", "MERGED", "REDECLARED", "ROWS", "Row"]
