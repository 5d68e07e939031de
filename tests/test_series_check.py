from testbed.kernel.per_patch import checkpatch_counts, new_warnings

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


def test_config_value_reads_set_module_and_unset_options():
    from testbed.kernel.per_patch import KUNIT_OPTION, config_value
    text = ("CONFIG_CIFS=y\nCONFIG_KUNIT=m\n"
            f"# {KUNIT_OPTION} is not set\nCONFIG_LOCALVERSION=\"-tb\"\n")
    assert config_value(text, "CONFIG_CIFS") == "y"
    assert config_value(text, "CONFIG_KUNIT") == "m"
    assert config_value(text, KUNIT_OPTION) is None
    assert config_value(text, "CONFIG_LOCALVERSION") == "-tb"
    assert config_value(text, "CONFIG_CIFS_X") is None


def test_kconfig_cases_forbid_the_test_where_it_cannot_link():
    from testbed.kernel.per_patch import KCONFIG_CASES
    builtin_cifs_module_kunit = [c for c in KCONFIG_CASES
                                 if "CONFIG_CIFS=y" in c[1]
                                 and "CONFIG_KUNIT=m" in c[1]]
    assert builtin_cifs_module_kunit and builtin_cifs_module_kunit[0][2] is None
