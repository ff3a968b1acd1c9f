"""Kubernetes' size limit on a selector, which both evaluators enforce before compiling."""

from npu_dra.domain.errors import SelectorError

MAX_EXPRESSION_BYTES = 10 * 1024  # resource.k8s.io CELSelectorExpressionMaxLength


def check_size(expression: str) -> None:
    if len(expression.encode()) > MAX_EXPRESSION_BYTES:
        raise SelectorError(expression, f"longer than {MAX_EXPRESSION_BYTES} bytes")
