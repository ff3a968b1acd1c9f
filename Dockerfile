# syntax=docker/dockerfile:1
# The npu-dra image: `npu-dra kubelet-plugin` (DRA) or `npu-dra device-plugin` (classic), as the
# DaemonSet's command says. Build: docker build -t npu-dra:0.1.0 .
#
# npu-smi and the Ascend driver's libraries are not in the image: the DaemonSets mount them from
# the host (/usr/local/bin/npu-smi, /usr/local/Ascend) and set LD_LIBRARY_PATH, as the seed
# does, so one image serves every driver version and no Huawei binaries are redistributed.

FROM python:3.11-slim AS wheels
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src/ src/
# Every dependency as a wheel, so the final stage needs neither a compiler nor the sources.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels npu-dra \
    && useradd --system --uid 65532 --no-create-home --shell /usr/sbin/nologin npu-dra
# Root, on purpose: both DaemonSets create sockets in the kubelet's root-owned directories
# (/var/lib/kubelet/plugins_registry, plugins, device-plugins), write CDI specs under
# /var/run/cdi, and run npu-smi, which opens /dev/davinci_manager; they run privileged for the
# same reason. Commands that touch no host path run unprivileged:
#   docker run --user 65532 npu-dra:0.1.0 simulate
USER 0
ENTRYPOINT ["npu-dra"]
CMD ["--help"]
