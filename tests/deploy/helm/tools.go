//go:build tools

// Package tools pins the helm command in go.mod so `go mod tidy` keeps it.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
