"""Kubernetes' url library: url(), isURL() and the getters, with Go's net/url semantics."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator, urls
from npu_dra.domain.errors import SelectorError
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        'url("https://a.b:80/p").getPort() == "80"',
        "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
        "isURL('/absolute-path') && isURL('mailto:a@b.c')",
        "!isURL('https://a:b:c/') && !isURL('../relative-path') && !isURL('')",
        "!isURL('http://x/%zz') && !isURL('http://a b/') && !isURL('http://[1.2.3.4]/')",
        "url('/path').getScheme() == '' && url('HTTPS://example.com/').getScheme() == 'https'",
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        "url('https://[::1]:80/').getHost() == '[::1]:80' && url('/path').getHost() == ''",
        "url('https://[::1]:80/').getHostname() == '::1'",
        "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
        "url('https://example.com/').getPort() == '' && url('/path').getPort() == ''",
        "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
        "url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
        "url('https://example.com').getEscapedPath() == ''",
        "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()"
        " == {'k1': ['a'], 'k2': ['b', 'c']}",
        "url('https://example.com/path?key with spaces=value with spaces').getQuery()"
        " == {'key with spaces': ['value with spaces']}",
        "url('https://example.com/path?').getQuery() == {}",
        "url('https://e.com/?a=1;b=2&c=%zz&d=%41+x&e').getQuery() == {'d': ['A x'], 'e': ['']}",
        "url('https://example.com/p') == url('HTTPS://example.com/p')",  # equal as Go prints them
        "url('https://example.com/p') != url('https://example.com/q')",
    ],
)
def test_the_kubernetes_url_examples_hold(evaluator: CelSelectorEvaluator, expression: str) -> None:
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("https://a:b:c/", 'invalid port ":c" after host'),
        ("../relative-path", "invalid URI for request"),
        ("http://x/%zz", 'invalid URL escape "%zz"'),
        ("http://[::1/", "missing ']' in host"),
        ("http://u^s@host/", "invalid userinfo"),
    ],
)
def test_a_url_go_refuses_is_an_error_in_gos_words(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match="URL parse error during conversion from string") as raised:
        urls.url(text)
    assert reason in str(raised.value)


def test_a_url_that_does_not_parse_fails_the_selector(evaluator: CelSelectorEvaluator) -> None:
    with pytest.raises(SelectorError, match="URL parse error"):
        holds(evaluator, "url('../relative').getScheme() == ''")
