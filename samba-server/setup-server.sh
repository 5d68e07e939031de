#!/bin/sh
# Run by the server guest's testbed-setup at every boot, before smbd and
# knfsd start: installs smb.conf, creates the share directory and the Samba
# users, and exports /srv/nfs to the client over NFS (v3 and v4.2).
set -eu
here=/mnt/testbed
. "$here/testbed.conf"
. "$here/testbed.env"

install -m 0644 "$here/smb.conf" /etc/samba/smb.conf
# A second address on the same link, advertised with the first, so that a
# multichannel client binds its second channel to it (one address gets one
# channel); the addresses are the testbed's, not a route anywhere.
ip addr add "${SERVER_IP%.*}.3/$PREFIX" dev eth0 2>/dev/null || true
sed -i "s|^\t@INTERFACES@\$|\tinterfaces = \"$SERVER_IP;capability=RSS,speed=10000000000\" \"${SERVER_IP%.*}.3;capability=RSS,speed=10000000000\"|" \
	/etc/samba/smb.conf
if ! id "$SMB_USER" >/dev/null 2>&1; then
	useradd -u "$SMB_UID" -M -d "$SHARE_PATH" -s /usr/sbin/nologin "$SMB_USER"
fi
mkdir -p "$SHARE_PATH"
chown "$SMB_USER:$SMB_USER" "$SHARE_PATH"
chmod 0775 "$SHARE_PATH"
# the share of the smbd for smbtorture (smb-torture.conf)
install -d -o "$SMB_USER" -g "$SMB_USER" -m 0775 /srv/torture
printf '%s\n%s\n' "$SMB_PASS" "$SMB_PASS" | smbpasswd -s -a "$SMB_USER" >/dev/null
if ! id "$SMB_USER2" >/dev/null 2>&1; then
	useradd -u "$SMB_UID2" -M -d /nonexistent -s /usr/sbin/nologin "$SMB_USER2"
fi
printf '%s\n%s\n' "$SMB_PASS2" "$SMB_PASS2" | smbpasswd -s -a "$SMB_USER2" >/dev/null

mkdir -p "$NFS_PATH"
chmod 1777 "$NFS_PATH"
printf '%s %s(rw,sync,no_subtree_check,no_root_squash,insecure)\n' \
	"$NFS_PATH" "$CLIENT_IP" >/etc/exports
