"""The options for watching a running command: its log, its Prometheus metrics and its gRPC
liveness port.
"""

from npu_dra.app.options.option import Option
from npu_dra.app.options.values import LOG_FORMATS, LOG_LEVELS, one_of, port

PORTS = (
    Option(
        "healthcheck_port",
        ("--healthcheck-port",),
        "grpc.health.v1 liveness port; -1 off, 0 any free port",
        "-1",
        port,
        "HEALTHCHECK_PORT",
        "PORT",
    ),
    Option(
        "metrics_port",
        ("--metrics-port",),
        "Prometheus /metrics port; -1 off, 0 any free port",
        "-1",
        port,
        "METRICS_PORT",
        "PORT",
    ),
)

LOGGING = (
    Option(
        "log_level",
        ("--log-level",),
        "log level: debug, info, warning or error; empty: info for the plugins, warning "
        "for discover and simulate",
        "",
        one_of(("", *LOG_LEVELS)),
        "LOG_LEVEL",
    ),
    Option(
        "log_format",
        ("--log-format",),
        "text for people, json for log collectors",
        "text",
        one_of(LOG_FORMATS),
        "LOG_FORMAT",
    ),
)
