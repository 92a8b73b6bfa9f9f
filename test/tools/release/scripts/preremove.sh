#!/bin/sh
# apiserver-lite's pre-removal script, for dpkg (prerm: "remove", or
# "upgrade" and others) and for rpm (%preun: 0 on removal, 1 or more on an
# upgrade). On removal it stops and disables every apiserver-lite unit the
# package ships; an upgrade leaves them to the post-install script.
set -e

case "$1" in
remove | 0) ;;
*) exit 0 ;;
esac

units=""
for f in /usr/lib/systemd/system/apiserver-lite*; do
	[ -e "$f" ] && units="$units ${f##*/}"
done
[ -n "$units" ] || exit 0

if [ -d /run/systemd/system ]; then
	# shellcheck disable=SC2086 # one word per unit
	systemctl stop $units >/dev/null 2>&1 || true
fi
# shellcheck disable=SC2086
systemctl disable $units >/dev/null 2>&1 || true
exit 0
