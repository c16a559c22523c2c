package shim

import (
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/cache"
)
