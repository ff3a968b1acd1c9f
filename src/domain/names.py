"""The API server's name rules, checked where a name enters npu-dra instead of when every
ResourceSlice or Node request is refused.

Sources (Kubernetes v1.34.3):
- k8s.io/apimachinery/pkg/util/validation/validation.go: IsDNS1123Subdomain (253 characters,
  `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`) and IsQualifiedName
  (an optional DNS-subdomain prefix and `/`, then at most 63 of `[A-Za-z0-9][-A-Za-z0-9_.]*`
  ending alphanumeric); IsValidLabelValue (empty, or at most 63 of the same characters).
- pkg/apis/resource/validation/validation.go: a driver name is checked as a CSI driver name
  (pkg/apis/core/validation ValidateCSIDriverName): at most 63 characters and, lowercased, a
  DNS-1123 subdomain.
- pkg/apis/core/validation ValidateNodeName: a node name is a DNS-1123 subdomain.
- pkg/apis/core/validation validateExtendedResourceName: a qualified name with a prefix outside
  kubernetes.io, and `requests.<name>` a qualified name too.
"""

import re

DNS_SUBDOMAIN_MAX = 253
DRIVER_NAME_MAX = 63
QUALIFIED_NAME_MAX = 63

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def dns_subdomain_problem(text: str) -> str | None:
    """Why `text` is not a DNS-1123 subdomain; None when it is."""
    if not text:
        return "must not be empty"
    if len(text) > DNS_SUBDOMAIN_MAX:
        return f"must be no more than {DNS_SUBDOMAIN_MAX} characters"
    if not _DNS_SUBDOMAIN.fullmatch(text):
        return (
            "must be a DNS subdomain: lowercase letters, digits, '-' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def driver_name_problem(text: str) -> str | None:
    """Why the API server would refuse `text` as a DRA driver name; None when it accepts it."""
    if len(text) > DRIVER_NAME_MAX:
        return f"must be no more than {DRIVER_NAME_MAX} characters"
    return dns_subdomain_problem(text.lower())


def node_name_problem(text: str) -> str | None:
    """Why `text` cannot be a Node's name; None when it can."""
    return dns_subdomain_problem(text)


def qualified_name_problem(text: str) -> str | None:
    """Why `text` is not a qualified name (`[prefix/]name`); None when it is."""
    prefix, slash, name = text.rpartition("/")
    if slash and not prefix:
        return "has an empty prefix before '/'"
    if prefix and (problem := dns_subdomain_problem(prefix)):
        return f"prefix {prefix!r} {problem}"
    if not name:
        return "must have a name after the prefix"
    if len(name) > QUALIFIED_NAME_MAX:
        return f"name part must be no more than {QUALIFIED_NAME_MAX} characters"
    if not _QUALIFIED_NAME.fullmatch(name):
        return (
            "name part must consist of letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return None


def label_value_problem(text: str) -> str | None:
    """Why `text` is not a label value (which may be empty); None when it is."""
    if len(text) > QUALIFIED_NAME_MAX:
        return f"must be no more than {QUALIFIED_NAME_MAX} characters"
    if text and not _QUALIFIED_NAME.fullmatch(text):
        return (
            "must consist of letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return None


def extended_resource_problem(text: str) -> str | None:
    """Why the kubelet and API server would refuse `text` as an extended resource name."""
    prefix = text.rpartition("/")[0]
    if not prefix:
        return "needs a domain prefix, e.g. huawei.com/Ascend910"
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        return "must not use the kubernetes.io domain, which is reserved for native resources"
    problem = qualified_name_problem(text) or qualified_name_problem(f"requests.{text}")
    return problem
