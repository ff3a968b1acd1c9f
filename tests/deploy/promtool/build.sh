#!/usr/bin/env bash
# Builds promtool, Prometheus' own rule checker, at the pinned module version into a cache
# outside the repository, once; later runs find it and return at once. Prints its path on stdout.
# `go install module@version` needs no go.mod here (the module has no replace directives).
set -euo pipefail
version=v0.316.0 # github.com/prometheus/prometheus's Go module version
cache=${NPU_DRA_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-dra/promtool/$version}
out=$cache/promtool
mkdir -p "$cache"
(
  # One build at a time: a second caller waits here, then finds the binary built.
  exec 9>"$cache/.build.lock"
  flock 9
  if [ ! -x "$out" ]; then
    if ! command -v go >/dev/null 2>&1; then
      echo "error: promtool is not in $cache and \`go\` is not on PATH to build it;" \
        "install Go >= 1.26 (https://go.dev/dl/) and put it on PATH" >&2
      exit 3
    fi
    echo "building promtool $version (first run only; this takes minutes)" >&2
    GOBIN="$cache/bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
      "github.com/prometheus/prometheus/cmd/promtool@$version"
    mv "$cache/bin/promtool" "$out"
  fi
)
echo "$out"
