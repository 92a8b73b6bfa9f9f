#!/bin/sh
# apiserver-lite's post-removal script, for dpkg (postrm: "remove",
# "purge", "upgrade", ...) and for rpm (%postun: 0 on removal, 1 or more on
# an upgrade).
#
# Removal keeps the data (/var/lib/apiserver-lite), the config and the
# operator's kubeconfig (/etc/apiserver-lite) and the sealed state key
# (/etc/credstore.encrypted/apiserver-lite.state-key): reinstalling picks
# the node up where it was. Only dpkg's purge deletes them; rpm has no
# purge (see operations.md, "Uninstall").
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi

if [ "$1" = purge ]; then
	# Under DynamicUser= the state lives in /var/lib/private/apiserver-lite,
	# reached through the /var/lib/apiserver-lite symlink.
	rm -rf /var/lib/private/apiserver-lite /var/lib/apiserver-lite /etc/apiserver-lite
	rm -f /etc/credstore.encrypted/apiserver-lite.state-key /etc/credstore.encrypted/apiserver-lite.state-key.new
fi
exit 0
