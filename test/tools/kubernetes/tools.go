//go:build tools

// Package tools records the Kubernetes commands the e2e tests build, so that
// go.mod and go.sum pin them. It is never compiled into a product binary.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubemark"
)
