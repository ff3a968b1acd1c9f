# Sourced by the Go build scripts (tests/e2e/k8s, tests/e2e/node, tests/deploy/helm).
# go_build OUT PACKAGE [LDFLAGS]: builds PACKAGE of the Go module in the current directory into
# OUT, statically (no cgo) and without VCS stamps, unless OUT is already there; a missing Go
# toolchain is an error naming what to install. Callers hold their cache's build lock.
go_build() {
  local out=$1 package=$2 ldflags=${3:--s -w}
  [ -x "$out" ] && return 0
  if ! command -v go >/dev/null 2>&1; then
    echo "error: $(basename "$out") is not in $(dirname "$out") and \`go\` is not on PATH to" \
      "build it; install Go >= 1.26 (https://go.dev/dl/) and put it on PATH" >&2
    exit 3
  fi
  echo "building $(basename "$out") (first run only; this takes minutes)" >&2
  CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out.tmp" "$package"
  mv "$out.tmp" "$out"
}
