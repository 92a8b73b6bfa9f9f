#!/usr/bin/env bash
# Writes the release artifacts into OUT_DIR: for each architecture, the
# .deb, the .rpm and a tarball (package.sh), then SHA256SUMS over them.
#
#   VERSION=... LDFLAGS=... test/tools/release/dist.sh OUT_DIR
#
# amd64 and arm64 (edge boards) are built. go-sqlite3 needs cgo, so an
# architecture other than the host's needs its cross C compiler; without
# it that architecture is skipped with a message naming the Debian package
# that installs it, and the rest is still written.
set -euo pipefail

[[ $# -eq 1 ]] || {
	echo "usage: dist.sh OUT_DIR" >&2
	exit 2
}
out="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
host="$("${GO:-go}" env GOARCH)"

# cross_cc prints the cross C compiler of arch and its Debian package.
cross_cc() {
	case "$1" in
	amd64) echo "x86_64-linux-gnu-gcc gcc-x86-64-linux-gnu" ;;
	arm64) echo "aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu" ;;
	*) return 1 ;;
	esac
}

rm -rf "$out"
mkdir -p "$out"
built=()
for arch in amd64 arm64; do
	if [[ "$arch" == "$host" ]]; then
		"$here/package.sh" "$arch" "$out" --tarball
		built+=("$arch")
		continue
	fi
	read -r cc debpkg < <(cross_cc "$arch")
	if ! command -v "$cc" >/dev/null; then
		echo "dist.sh: linux/$arch skipped: no cross C compiler $cc (apt-get install $debpkg)" >&2
		continue
	fi
	CC="$cc" "$here/package.sh" "$arch" "$out" --tarball
	built+=("$arch")
done

(cd "$out" && sha256sum -- *.deb *.rpm *.tar.gz >SHA256SUMS)
echo "dist.sh: built ${built[*]} in $out" >&2
