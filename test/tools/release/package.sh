#!/usr/bin/env bash
# Builds apiserver-lite for linux/ARCH and packages it as a .deb and an
# .rpm with nfpm (the version this module's go.mod pins, run with go run
# so the product's go.mod stays lean), and with --tarball also as
# apiserver-lite_<version>_linux_<arch>.tar.gz, into OUT_DIR.
#
#   VERSION=0.0.0-20260101-abcdef0 LDFLAGS="-X main.version=..." \
#     test/tools/release/package.sh ARCH OUT_DIR [--tarball]
#
# The binary is built with cgo (go-sqlite3); an ARCH other than the host's
# needs its cross C compiler, CC (for arm64: aarch64-linux-gnu-gcc, from
# Debian's gcc-aarch64-linux-gnu). The units are shipped with ExecStart at
# /usr/bin, where the package puts the binary.
set -euo pipefail

usage() {
	echo "usage: package.sh ARCH OUT_DIR [--tarball]" >&2
	exit 2
}
[[ $# -ge 2 && $# -le 3 ]] || usage
arch="$1"
out="$2"
tarball=false
case "${3:-}" in
"") ;;
--tarball) tarball=true ;;
*) usage ;;
esac
: "${VERSION:?VERSION is required}"
: "${LDFLAGS:=}"
go="${GO:-go}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
stage="$root/bin/package/linux-$arch"
# The units name the binary where make install puts it by default.
unit_binary=/usr/local/bin/apiserver-lite
export GOWORK=off

# The C compiler of the product's build only: nfpm is built for the host.
cc="${CC:-}"
unset CC
host="$("$go" env GOARCH)"
if [[ "$arch" != "$host" && -z "$cc" ]]; then
	case "$arch" in
	arm64) cc=aarch64-linux-gnu-gcc ;;
	*)
		echo "package.sh: set CC to a C compiler for linux/$arch" >&2
		exit 1
		;;
	esac
fi

rm -rf "$stage"
mkdir -p "$stage/units" "$out"
out="$(cd "$out" && pwd)"

echo "package.sh: building linux/$arch" >&2
build_env=(CGO_ENABLED=1 GOOS=linux GOARCH="$arch")
if [[ -n "$cc" ]]; then
	build_env+=(CC="$cc")
fi
(cd "$root" && env "${build_env[@]}" \
	"$go" build -trimpath -ldflags "$LDFLAGS" -o "$stage/apiserver-lite" ./cmd/apiserver-lite)

for unit in "$root"/systemd/*; do
	sed "s|$unit_binary|/usr/bin/apiserver-lite|g" "$unit" >"$stage/units/${unit##*/}"
done

# nfpm's arch names are Go's; its version is semver, so a leading v of a
# tag goes.
for packager in deb rpm; do
	echo "package.sh: nfpm $packager" >&2
	APISERVER_LITE_ROOT="$root" APISERVER_LITE_STAGE="$stage" \
		APISERVER_LITE_ARCH="$arch" APISERVER_LITE_VERSION="${VERSION#v}" \
		"$go" -C "$here" run github.com/goreleaser/nfpm/v2/cmd/nfpm \
		package --config nfpm.yaml --packager "$packager" --target "$out/" >&2
done

if $tarball; then
	name="apiserver-lite_${VERSION#v}_linux_$arch"
	tree="$stage/$name"
	mkdir -p "$tree/bin" "$tree/docs"
	cp "$stage/apiserver-lite" "$tree/bin/"
	cp -r "$root/systemd" "$root/configs" "$root/monitoring" "$tree/"
	cp "$root/LICENSE" "$root/README.md" "$tree/"
	cp "$root/docs/operations.md" "$root/docs/security.md" "$tree/docs/"
	# Owned by root and dated by the commit, so the same commit gives the
	# same archive members.
	mtime="$(git -C "$root" show -s --format=%cI HEAD 2>/dev/null || date -u +%FT%TZ)"
	tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
		-cf - "$name" | gzip -n >"$out/$name.tar.gz"
fi
