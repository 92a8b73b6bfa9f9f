//go:build tools

// Package tools records the CoreDNS server the e2e tests build, so that
// go.mod and go.sum pin it. It is never compiled into a product binary.
package tools

import _ "github.com/coredns/coredns"
