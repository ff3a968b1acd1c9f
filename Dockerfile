# syntax=docker/dockerfile:1
# The npu-dra image: `npu-dra kubelet-plugin` (DRA) or `npu-dra device-plugin` (classic), as the
# DaemonSet's command says. Build: docker build -t npu-dra:0.2.0 . (or, without a daemon,
# buildah build -t npu-dra:0.2.0 .; add --platform linux/arm64 for Kunpeng nodes); add
# --build-arg COMMIT=$(git rev-parse --short=12 HEAD) for `npu-dra --version` to name the commit
# (`make release` does).
#
# npu-smi and the Ascend driver's libraries are not in the image: the DaemonSets mount them from
# the host (/usr/local/bin/npu-smi, /usr/local/Ascend) and set LD_LIBRARY_PATH, as Huawei's
# npu-dra-plugin does, so one image serves every driver version and no Huawei binaries are redistributed.

# The base: Python 3.11 with pip. python:3.11-slim by default; where no registry is reachable, a
# local image with Debian 12's python3 and python3-pip, passed as --build-arg BASE=<image> (the
# tests build it with mmdebstrap). Debian's own pip refuses to install into the system Python
# (PEP 668) unless told to; the official image ignores the setting.
ARG BASE=python:3.11-slim

FROM ${BASE} AS wheels
ENV PIP_BREAK_SYSTEM_PACKAGES=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src/ src/
# Every dependency as a wheel, so the final stage needs neither a compiler nor the sources.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${BASE}
ARG COMMIT=unknown
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_BREAK_SYSTEM_PACKAGES=1 NPU_DRA_COMMIT=${COMMIT}
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels npu-dra \
    && useradd --system --uid 65532 --no-create-home --shell /usr/sbin/nologin npu-dra
# Root, on purpose: both DaemonSets create sockets in the kubelet's root-owned directories
# (/var/lib/kubelet/plugins_registry, plugins, device-plugins), write CDI specs under
# /var/run/cdi, and run npu-smi, which opens /dev/davinci_manager; they run privileged for the
# same reason. Commands that touch no host path run unprivileged:
#   docker run --user 65532 npu-dra:0.2.0 simulate
USER 0
ENTRYPOINT ["npu-dra"]
CMD ["--help"]
