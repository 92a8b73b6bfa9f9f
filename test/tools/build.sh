#!/usr/bin/env bash
# Builds the real control plane and clients the e2e tests run against:
# etcd, kube-apiserver, kubectl and kubemark (a hollow kubelet or
# kube-proxy), CoreDNS and flanneld, from the wrapper modules next to this
# script, using only the Go toolchain and the module proxy. flanneld's
# package main (the module's root) is copied from the module cache into a
# temporary dir at build time, without the tencentvpc backend's import
# (its SDK module is not served), and built with the wrapper's go.mod.
#
# Binaries are cached per version under
#   ${APISERVER_LITE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/apiserver-lite/tools}/<version>/
# and each is built only when missing, so only the first run pays for the
# build (several minutes for kube-apiserver). CoreDNS, whose version the
# dir name does not carry, is built as coredns-<version> and linked as
# coredns; flanneld likewise. Each binary is built under a
# temporary name and renamed into place, so an interrupted build never leaves
# a truncated binary behind.
#
# Progress goes to stderr; the only line on stdout is the bin dir, e.g.
#   export APISERVER_LITE_TOOLS_BIN="$(test/tools/build.sh)"
#
# With --upstream-e2e it also builds Kubernetes' own e2e suite, e2e.test
# (go test -c of k8s.io/kubernetes/test/e2e), into the same dir. Only
# `make upstream-e2e` asks for it: it is the biggest binary here (about
# 20 minutes on two cores the first time) and `make test` does not use it.
set -euo pipefail

upstream_e2e=false
case "${1:-}" in
"") ;;
--upstream-e2e) upstream_e2e=true ;;
*)
	echo "usage: build.sh [--upstream-e2e]" >&2
	exit 2
	;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# module_version prints the version a wrapper go.mod requires for a module.
module_version() {
	local gomod="$1" module="$2" version
	version="$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m && $2 ~ /^v/ { print $2 }' "$gomod" | head -n1)"
	if [[ -z "$version" ]]; then
		echo "build.sh: no version of $module in $gomod" >&2
		exit 1
	fi
	echo "$version"
}

etcd_version="$(module_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)"
kube_version="$(module_version "$here/kubernetes/go.mod" k8s.io/kubernetes)"
coredns_version="$(module_version "$here/coredns/go.mod" github.com/coredns/coredns)"
flannel_version="$(module_version "$here/flannel/go.mod" github.com/flannel-io/flannel)"
platform="$(go env GOOS)-$(go env GOARCH)"
version="kubernetes-${kube_version}_etcd-${etcd_version}_${platform}"
tools_dir="${APISERVER_LITE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/apiserver-lite/tools}"
bin_dir="$tools_dir/$version"
mkdir -p "$bin_dir"

# The wrapper modules are standalone; a go.work elsewhere must not leak in.
export GOWORK=off
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

# Version stamps a release build sets, so /version and kubectl version report
# the real release instead of v0.0.0-master.
kube_minor="${kube_version#v1.}"
kube_minor="${kube_minor%%.*}"
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
	kube_ldflags+=" -X $pkg.gitTreeState=clean"
done

# build_one builds package pkg from module dir mod into $bin_dir/name unless
# that file already exists. Extra arguments are passed to go build, or to
# go test -c when go_build is "test -c".
go_build="build"
build_one() {
	local mod="$1" pkg="$2" name="$3"
	shift 3
	local out="$bin_dir/$name"
	if [[ -x "$out" ]]; then
		echo "build.sh: $name cached at $out" >&2
		return
	fi
	# Global, so the EXIT trap still sees it if go build fails.
	partial="$bin_dir/.$name.tmp.$$"
	trap 'rm -f "$partial"' EXIT
	echo "build.sh: building $name from $pkg ..." >&2
	local start=$SECONDS
	# shellcheck disable=SC2086 # go_build is two words for go test -c
	(cd "$here/$mod" && go $go_build -trimpath "$@" -o "$partial" "$pkg")
	mv -f "$partial" "$out"
	trap - EXIT
	echo "build.sh: built $name in $((SECONDS - start))s" >&2
}

# Serialize concurrent runs on one cache dir so they do not build twice.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$bin_dir/.lock"
	flock 9
fi

build_one etcd go.etcd.io/etcd/server/v3 etcd
build_one kubernetes k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver -ldflags "$kube_ldflags"
build_one kubernetes k8s.io/kubernetes/cmd/kubectl kubectl -ldflags "$kube_ldflags"
build_one kubernetes k8s.io/kubernetes/cmd/kubemark kubemark -ldflags "$kube_ldflags"
# The cache key above names Kubernetes and etcd only; CoreDNS carries its
# version in its file name, and coredns points at the one go.mod pins.
build_one coredns github.com/coredns/coredns "coredns-$coredns_version"
ln -sfn "coredns-$coredns_version" "$bin_dir/coredns"

# build_flanneld builds flanneld-<version> from the flannel module's own
# package main, copied out of the module cache, unless it exists.
build_flanneld() {
	local name="flanneld-$flannel_version" src dir
	local out="$bin_dir/$name"
	if [[ -x "$out" ]]; then
		echo "build.sh: $name cached at $out" >&2
		return
	fi
	echo "build.sh: building $name from github.com/flannel-io/flannel ..." >&2
	local start=$SECONDS
	dir="$(cd "$here/flannel" && go mod download -json github.com/flannel-io/flannel | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	src="$(mktemp -d "$bin_dir/.flannel-src.XXXXXX")"
	partial="$bin_dir/.$name.tmp.$$"
	trap 'rm -rf "$partial" "$src"' EXIT
	cp "$here/flannel/go.mod" "$here/flannel/go.sum" "$src/"
	sed '/flannel\/pkg\/backend\/tencentvpc"/d' "$dir/main.go" >"$src/main.go"
	(cd "$src" && go build -trimpath -ldflags "-X github.com/flannel-io/flannel/pkg/version.Version=$flannel_version" -o "$partial" .)
	mv -f "$partial" "$out"
	rm -rf "$src"
	trap - EXIT
	echo "build.sh: built $name in $((SECONDS - start))s" >&2
}
build_flanneld
ln -sfn "flanneld-$flannel_version" "$bin_dir/flanneld"

if $upstream_e2e; then
	# A lock of its own, so the long e2e.test build does not hold up runs
	# that only need the tools above.
	if command -v flock >/dev/null 2>&1; then
		exec 9>&-
		exec 8>"$bin_dir/.e2e.test.lock"
		flock 8
	fi
	go_build="test -c" build_one kubernetes k8s.io/kubernetes/test/e2e e2e.test -ldflags "$kube_ldflags"
fi

echo "$bin_dir"
