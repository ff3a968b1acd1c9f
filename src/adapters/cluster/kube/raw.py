"""The few resource.k8s.io/v1 calls the plugin makes, on the official client's ApiClient without
its generated ResourceV1Api.

Naming ResourceV1Api imports its module and the pydantic models it annotates (about a quarter
of a second of CPU and 6 MiB at start), and each of its methods validates its arguments with
pydantic on every call. The plugin sends dict bodies and reads raw JSON anyway, so these methods
serialize the request with `ApiClient.param_serialize` and send it with `ApiClient.call_api`, as
the generated methods do, and answer like them with `_preload_content=False`: the urllib3
response, a non-2xx status raised as ApiException. Same names and arguments as ResourceV1Api's,
so `kubernetes.watch.Watch` can stream `list_resource_slice` (raw events: no model to decode).
An argument these methods do not know is a TypeError, never silently dropped (`dry_run` dropped
would create for real).

The two single-object reads (a claim on every prepare, a device class) skip `call_api` and go
straight to the client's own connection pool (`DirectGet`): 0.3-0.45 ms less CPU per claim read
here (2.28 -> 2.00 ms median, 2.13 -> 1.67 min, 8 interleaved rounds of 200 reads against a
v1.34.3 API server), same headers, token, TLS and connections.
"""

from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

import urllib3
from kubernetes.client import ApiClient, ApiException
from kubernetes.client.rest import RESTResponse

GROUP = "/apis/resource.k8s.io/v1"
JSON = "application/json"


class RawResourceApi:
    def __init__(self, api: ApiClient) -> None:
        self._api = api
        self._direct = DirectGet.on(api)
        self.list_resource_slice = RawList(api, f"{GROUP}/resourceslices")

    def read_namespaced_resource_claim(
        self,
        name: str,
        namespace: str,
        *,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        if self._direct is not None:
            return self._direct.get(
                f"{GROUP}/namespaces/{_quoted(namespace)}/resourceclaims/{_quoted(name)}",
                _request_timeout,
            )
        path = f"{GROUP}/namespaces/{{namespace}}/resourceclaims/{{name}}"
        return raw_call(
            self._api, "GET", path, {"name": name, "namespace": namespace}, _request_timeout
        )

    def read_device_class(
        self, name: str, *, _request_timeout: Any = None, _preload_content: bool = False
    ) -> Any:
        if self._direct is not None:
            return self._direct.get(f"{GROUP}/deviceclasses/{_quoted(name)}", _request_timeout)
        path = f"{GROUP}/deviceclasses/{{name}}"
        return raw_call(self._api, "GET", path, {"name": name}, _request_timeout)

    def create_resource_slice(
        self,
        body: dict[str, Any],
        *,
        dry_run: str | None = None,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        query = [("dryRun", dry_run)] if dry_run is not None else []
        path = f"{GROUP}/resourceslices"
        return raw_call(self._api, "POST", path, {}, _request_timeout, query=query, body=body)

    def replace_resource_slice(
        self,
        name: str,
        body: dict[str, Any],
        *,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        path = f"{GROUP}/resourceslices/{{name}}"
        return raw_call(self._api, "PUT", path, {"name": name}, _request_timeout, body=body)

    def delete_resource_slice(
        self,
        name: str,
        *,
        body: dict[str, Any] | None = None,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        path = f"{GROUP}/resourceslices/{{name}}"
        return raw_call(self._api, "DELETE", path, {"name": name}, _request_timeout, body=body)


class RawList:
    """The list (with `watch=True`, the watch) of the objects at `path`, as a generated list method
    takes it (the arguments ListWatch and kubernetes' Watch pass) and answers it: the urllib3
    response. No model: Watch hands out raw events."""

    def __init__(self, api: ApiClient, path: str, params: dict[str, str] | None = None) -> None:
        self._api, self._path, self._params = api, path, params or {}

    def __call__(
        self,
        *,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_watch_bookmarks: bool | None = None,
        timeout_seconds: int | None = None,
        watch: bool | None = None,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        query = list_query(
            field_selector, resource_version, allow_watch_bookmarks, timeout_seconds, watch
        )
        return raw_call(
            self._api, "GET", self._path, self._params, _request_timeout, query=query,
            stream=bool(watch),
        )  # fmt: skip


def list_query(
    field_selector: str | None,
    resource_version: str | None,
    allow_watch_bookmarks: bool | None,
    timeout_seconds: int | None,
    watch: bool | None,
) -> list[tuple[str, Any]]:
    """A list or watch call's query parameters, as the generated methods send them."""
    return [
        (key, value)
        for key, value in (
            ("allowWatchBookmarks", allow_watch_bookmarks),
            ("fieldSelector", field_selector),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", timeout_seconds),
            ("watch", watch),
        )
        if value is not None
    ]


def raw_call(
    api: ApiClient,
    method: str,
    path: str,
    path_params: dict[str, str],
    timeout: Any,
    *,
    query: list[tuple[str, Any]] | None = None,
    body: dict[str, Any] | None = None,
    content_type: str = JSON,
    stream: bool = False,
) -> Any:
    """One call as the generated methods make it (JSON, the client's bearer token), answering
    the urllib3 response; a non-2xx status is raised as ApiException. `content_type`: the
    body's (a server-side apply sends JSON as `application/apply-patch+yaml`).

    The answer is read whole before it is returned (`.data` has it), unless `stream` (a watch):
    that gives its connection back to the client's pool. A write whose answer nobody read kept
    its connection checked out, and the next call on the pool opened a new one, with a TLS
    handshake (tests/unit/test_kube_write_connections.py)."""
    headers = {"Accept": JSON}
    if body is not None:
        headers["Content-Type"] = content_type
    client: Any = api
    request = client.param_serialize(
        method=method,
        resource_path=path,
        path_params=path_params,
        query_params=query or [],
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    response = client.call_api(*request, _request_timeout=timeout)
    if not 200 <= response.status <= 299:
        _raise_refusal(response)
    if not stream:
        response.response.read(cache_content=True)
    return response.response


def _raise_refusal(answer: RESTResponse) -> NoReturn:
    """A non-2xx answer as the client raises it: an ApiException with its status and body."""
    answer.read()  # type: ignore[no-untyped-call]
    raise ApiException.from_response(http_resp=answer, body=None, data=None)


def _quoted(value: str) -> str:
    return quote(value, safe="")


class DirectGet:
    """GETs of one object straight on the client's own connection pool (its TLS settings, client
    certificate and kept-alive connections), with the headers `raw_call` would send: the client's
    default ones, JSON, and its bearer token read through the configuration on every request (so
    a refreshed service-account token is used). What it leaves out of `ApiClient.call_api` is
    per-call work a single-object GET does not need (parameter sanitizing, the PoolManager's
    per-request pool lookup, the client's Retry-After handling, which our retries replace).
    Only for a client without a proxy: `on` answers None for one, and the caller goes through
    `raw_call`."""

    def __init__(self, api: ApiClient, pool: urllib3.HTTPConnectionPool, prefix: str) -> None:
        self._api = api
        self._pool = pool
        self._prefix = prefix  # a path in the server's URL (an API proxy), before every path

    @classmethod
    def on(cls, api: ApiClient) -> "DirectGet | None":
        client: Any = api
        manager = getattr(getattr(client, "rest_client", None), "pool_manager", None)
        if type(manager) is not urllib3.PoolManager:  # a proxy (or an unknown client): raw_call
            return None
        host = client.configuration.host
        return cls(api, manager.connection_from_url(host), urlsplit(host).path.rstrip("/"))

    def get(self, path: str, timeout: Any) -> urllib3.BaseHTTPResponse:
        client: Any = self._api
        headers = {**client.default_headers, "Accept": JSON}
        if client.cookie:
            headers["Cookie"] = client.cookie
        client.update_params_for_auth(headers, [], ["BearerToken"], path, "GET", None)
        try:
            response = self._pool.urlopen(
                "GET",
                self._prefix + path,
                headers=headers,
                timeout=urllib3.Timeout(total=timeout) if timeout else None,
                retries=False,
                redirect=False,
                preload_content=True,
            )
        except urllib3.exceptions.SSLError as error:  # as the client's rest layer reports it
            raise ApiException(status=0, reason=f"{type(error).__name__}\n{error}") from error
        if not 200 <= response.status <= 299:
            _raise_refusal(RESTResponse(response))
        return response
