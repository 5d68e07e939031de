from testbed.series_check import checkpatch_counts, new_warnings

MAKE = """\
  CC      fs/smb/client/notify.o
/root/src/linux/fs/smb/client/notify.c:120:9: warning: unused variable 'x' [-Wunused-variable]
/root/src/linux/drivers/gpu/foo.c:1:1: warning: something old in the tree
../fs/notify/dnotify/dnotify.c:44:2: error: expected ';' before '}' token
  LD      vmlinux
"""


def test_new_warnings_are_those_in_the_files_the_patch_touched():
    touched = ["fs/smb/client/notify.c", "fs/notify/dnotify/dnotify.c"]
    found = new_warnings(MAKE, touched)
    assert len(found) == 2
    assert "unused variable" in found[0] and "error:" in found[1]
    assert new_warnings(MAKE, ["fs/smb/client/smb2pdu.c"]) == []


def test_checkpatch_counts_by_kind():
    out = ("/w/kernel/0003-x.patch:19: WARNING: Prefer a maximum 75 chars\n"
           "/w/kernel/0003-x.patch:448: CHECK: Avoid CamelCase: <Action>\n"
           "/w/kernel/0003-x.patch:449: CHECK: Avoid CamelCase: <FileName>\n"
           "Traceback (most recent call last):\n")
    assert checkpatch_counts(out) == {"ERROR": 0, "WARNING": 1, "CHECK": 2}
