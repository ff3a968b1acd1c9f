#!/usr/bin/env bash
# Builds Kubernetes' own DRA test driver (k8s.io/kubernetes/test/e2e/dra/test-driver, a kubelet
# plugin on the kubeletplugin helper) from the Go module pinned in go.mod, once, into the same
# cache as build.sh's control plane. Only `make bench` needs it (benchmarks/vs_go.py compares
# npu-dra with it), so `make test` never pays for it. Prints the cache directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=v1.34.3
cache=${NPU_DRA_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-dra/k8s/$version}
out="$cache/dra-test-driver"
mkdir -p "$cache"
(
  exec 9>"$cache/.build.lock" # the lock build.sh holds: one Go build at a time
  flock 9
  cd "$here"
  # shellcheck source=../../support/go_build.sh
  . "$here/../../support/go_build.sh"
  go_build "$out" k8s.io/kubernetes/test/e2e/dra/test-driver
)
echo "$cache"
