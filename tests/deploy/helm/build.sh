#!/usr/bin/env bash
# Builds the helm CLI pinned in go.mod into a cache outside the repository, once. Later runs find
# the binary and return at once (without needing Go). Prints the binary's path on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=v3.19.5
k8s_minor=34 # of the k8s.io modules in go.mod: what `helm template` assumes the cluster runs
cache=${NPU_DRA_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-dra/helm/$version}
out=$cache/helm
mkdir -p "$cache"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
cd "$here"
(
  # One build at a time: a second caller waits here, then finds the binary built.
  exec 9>"$cache/.build.lock"
  flock 9
  # shellcheck source=../../support/go_build.sh
  . "$here/../../support/go_build.sh"
  go_build "$out" helm.sh/helm/v3/cmd/helm "$ldflags"
)
echo "$out"
