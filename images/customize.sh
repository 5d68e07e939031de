#!/bin/sh
# Runs inside the new root filesystem (chroot) after its packages are in:
# enables the per-boot set-up and the console shell, and masks what only
# slows a throwaway guest's boot down.
set -eu
role=$1

passwd -d root >/dev/null
systemctl enable testbed-setup.service serial-getty@hvc0.service >/dev/null 2>&1
systemctl mask apt-daily.timer apt-daily-upgrade.timer man-db.timer \
	e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	systemd-timesyncd.service nmbd.service samba-ad-dc.service \
	winbind.service serial-getty@ttyS0.service getty@tty1.service \
	nfs-blkmap.service >/dev/null 2>&1
# knfsd (and the rpcbind NFSv3 needs) only on the server; the client
# mounts NFSv3 with nolock, so it needs neither rpcbind nor statd.
if [ "$role" = server ]; then
	systemctl enable nfs-server.service rpcbind.socket >/dev/null 2>&1
else
	systemctl mask nfs-server.service nfs-kernel-server.service \
		rpcbind.service rpcbind.socket rpc-statd.service \
		auditd.service >/dev/null 2>&1
fi
: >/etc/machine-id
echo "$role" >/etc/hostname
apt-get clean
rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/locale/*
