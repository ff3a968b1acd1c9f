#!/usr/bin/env bash
# build.sh [VERSION]: builds containerd VERSION (v2.1.5 by default, from go.mod here; v1.7.35, the
# seed's stated minimum 1.7 line, from containerd-1.7/go.mod), its runc shim and ctr from
# containerd's Go module (and the sandbox image's `pause` from cmd/pause) into a cache outside the
# repository, once per version, and makes sure the node's system tools are installed:
# runc, the CNI plugins (ptp, host-local, loopback), iptables (which CNI plugins call), a static
# busybox (the test images' userland), mmdebstrap (the DaemonSet image's Debian base), buildah,
# qemu-user-static, binfmt-support and arch-test (the image built from the Dockerfile for amd64
# and arm64).
# Later runs find everything and return at once. Prints the cache directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-v2.1.5}
root=${XDG_CACHE_HOME:-$HOME/.cache}/npu-dra/node
case $version in
  v2.1.5) module=github.com/containerd/containerd/v2 dir=$here cache=${NPU_DRA_NODE_CACHE:-$root/containerd-$version} ;;
  v1.7.35) module=github.com/containerd/containerd dir=$here/containerd-1.7 cache=$root/containerd-$version ;;
  *) echo "error: containerd $version is not one this script builds (v2.1.5, v1.7.35)" >&2; exit 2 ;;
esac
mkdir -p "$cache"
ldflags="-s -w -X $module/version.Version=$version -X $module/version.Revision=npu-dra-e2e"
cd "$dir"

# Debian packages the node needs: command (or file) -> package.
packages() {
  local missing=()
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [ -x /usr/lib/cni/ptp ] || missing+=(containernetworking-plugins)
  # A static busybox: the test images hold nothing but it (ldd fails on a static binary).
  { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=(busybox-static)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  command -v iptables >/dev/null 2>&1 || missing+=(iptables)
  # The DaemonSet image: the Dockerfile built by buildah, for amd64 and (under qemu) arm64.
  command -v buildah >/dev/null 2>&1 || missing+=(buildah)
  [ -x /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
  command -v update-binfmts >/dev/null 2>&1 || missing+=(binfmt-support)
  command -v arch-test >/dev/null 2>&1 || missing+=(arch-test)  # mmdebstrap's foreign arches
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "error: the real node needs the packages: ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
    exit 3
  fi
  echo "installing ${missing[*]} (first run only)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# shellcheck source=../../support/go_build.sh
. "$here/../../support/go_build.sh"
build() { go_build "$cache/$1" "$2" "$ldflags"; } # name package
(
  # One build at a time: a second caller waits here, then finds everything done.
  exec 9>"$cache/.build.lock"
  flock 9
  packages
  build containerd $module/cmd/containerd
  build containerd-shim-runc-v2 $module/cmd/containerd-shim-runc-v2
  build ctr $module/cmd/ctr
  cd "$here" && build pause ./cmd/pause
)
echo "$cache"
