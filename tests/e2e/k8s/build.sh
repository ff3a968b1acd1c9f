#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet and etcd of one
# Kubernetes version from the Go modules pinned in that version's go.mod into a cache outside the
# repository, once. Later runs find the binaries and return at once (without needing Go).
# Usage: build.sh [VERSION]  (v1.34.3, the default, from ./go.mod; v1.36.3 from ./v1.36/go.mod;
# v1.37.2 from ./v1.37/go.mod)
# Prints the cache directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-v1.34.3}
case "$version" in
  v1.34.3) module="$here" ;;
  v1.36.3) module="$here/v1.36" ;;
  v1.37.2) module="$here/v1.37" ;;
  *) echo "error: no go.mod for Kubernetes $version here (v1.34.3, v1.36.3, v1.37.2)" >&2; exit 2 ;;
esac
minor=${version#v1.}
minor=${minor%%.*}
cache=${NPU_DRA_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-dra/k8s/$version}
mkdir -p "$cache"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
cd "$module"
# shellcheck source=../../support/go_build.sh
. "$here/../../support/go_build.sh"
build() { go_build "$cache/$1" "$2" "$ldflags"; } # name package
(
  # One build at a time: a second caller waits here, then finds the binaries built.
  exec 9>"$cache/.build.lock"
  flock 9
  build etcd ./cmd/etcd
  build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
  build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
  build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
  build kubectl k8s.io/kubernetes/cmd/kubectl
  build kubelet k8s.io/kubernetes/cmd/kubelet
)
echo "$cache"
