#!/bin/sh
# Run by the server guest's testbed-setup at every boot, before smbd starts:
# installs smb.conf, creates the share directory and the Samba user.
set -eu
here=/mnt/testbed
. "$here/testbed.conf"

install -m 0644 "$here/smb.conf" /etc/samba/smb.conf
if ! id "$SMB_USER" >/dev/null 2>&1; then
	useradd -u "$SMB_UID" -M -d "$SHARE_PATH" -s /usr/sbin/nologin "$SMB_USER"
fi
mkdir -p "$SHARE_PATH"
chown "$SMB_USER:$SMB_USER" "$SHARE_PATH"
chmod 0775 "$SHARE_PATH"
printf '%s\n%s\n' "$SMB_PASS" "$SMB_PASS" | smbpasswd -s -a "$SMB_USER" >/dev/null
