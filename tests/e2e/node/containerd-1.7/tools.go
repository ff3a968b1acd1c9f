//go:build tools

// Package tools pins containerd 1.7's commands in go.mod so `go mod tidy` keeps them.
package tools

import (
	_ "github.com/containerd/containerd/cmd/containerd"
	_ "github.com/containerd/containerd/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/cmd/ctr"
)
