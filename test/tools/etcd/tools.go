//go:build tools

// Package tools records the etcd server the e2e tests build, so that go.mod
// and go.sum pin it. It is never compiled into a product binary.
package tools

import _ "go.etcd.io/etcd/server/v3"
