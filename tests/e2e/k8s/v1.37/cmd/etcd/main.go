// Command etcd is etcd's own entry point (etcdmain), built at the version Kubernetes v1.37.2 pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
