#!/bin/sh
# apiserver-lite's post-install script, for dpkg (postinst: "configure"
# with the previously configured version, empty on a first install) and for
# rpm (%post: 1 on a first install, 2 or more on an upgrade).
#
# It never starts the daemon: the unit waits for the operator's cloud
# kubeconfig (ConditionPathExists=/etc/apiserver-lite/kubeconfig) and the
# state key is created on the node at first start by
# apiserver-lite-keygen.service. A first install enables the units (the
# kubelet's door's socket among them), so a node that boots with a
# kubeconfig starts them; an upgrade restarts a
# daemon that runs, which migrates its store (take a snapshot first: see
# /usr/share/doc/apiserver-lite/operations.md).
set -e

case "$1" in
configure)
	if [ -z "$2" ]; then action=install; else action=upgrade; fi
	;;
1) action=install ;;
[0-9]*) action=upgrade ;;
*) exit 0 ;; # dpkg's abort-upgrade, abort-remove, ...: nothing to do
esac

if [ "$action" = install ]; then
	# Works without a running systemd too (an image build): it only links.
	systemctl enable apiserver-lite-keygen.service apiserver-lite.socket \
		apiserver-lite.service apiserver-lite-credentials.path >/dev/null 2>&1 || true
fi

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	if [ "$action" = upgrade ]; then
		systemctl try-restart apiserver-lite.service >/dev/null 2>&1 || true
	fi
fi
exit 0
