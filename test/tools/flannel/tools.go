//go:build tools

// Package tools records what flanneld's package main imports (every
// backend but tencentvpc, whose SDK module is not served), so that go.mod
// and go.sum pin the flannel release the e2e tests build. build.sh copies
// that package main from the module cache at build time; it is never
// committed nor compiled into a product binary.
package tools

import (
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "github.com/coreos/pkg/flagutil"
	_ "github.com/flannel-io/flannel/pkg/backend"
	_ "github.com/flannel-io/flannel/pkg/backend/alloc"
	_ "github.com/flannel-io/flannel/pkg/backend/extension"
	_ "github.com/flannel-io/flannel/pkg/backend/hostgw"
	_ "github.com/flannel-io/flannel/pkg/backend/ipip"
	_ "github.com/flannel-io/flannel/pkg/backend/ipsec"
	_ "github.com/flannel-io/flannel/pkg/backend/udp"
	_ "github.com/flannel-io/flannel/pkg/backend/vxlan"
	_ "github.com/flannel-io/flannel/pkg/backend/wireguard"
	_ "github.com/flannel-io/flannel/pkg/ip"
	_ "github.com/flannel-io/flannel/pkg/ipmatch"
	_ "github.com/flannel-io/flannel/pkg/subnet"
	_ "github.com/flannel-io/flannel/pkg/subnet/etcd"
	_ "github.com/flannel-io/flannel/pkg/subnet/kube"
	_ "github.com/flannel-io/flannel/pkg/trafficmngr"
	_ "github.com/flannel-io/flannel/pkg/trafficmngr/iptables"
	_ "github.com/flannel-io/flannel/pkg/trafficmngr/nftables"
	_ "github.com/flannel-io/flannel/pkg/version"
	_ "github.com/joho/godotenv"
	_ "k8s.io/klog/v2"
)
