from testbed.suite import selection

LIST = """\
# FIXTURE            VARIANT                   TEST
global                                         share_is_cifs_mount
                                               server_disk_file_listed_on_client
--------------------------------------------------------------------------------
watched                                        create
                                               delete
--------------------------------------------------------------------------------
matrix               dn_create                 create_change
                     dn_delete                 delete_change
--------------------------------------------------------------------------------
empty                                          
"""


def test_harness_list_gives_case_names_with_variants_multiplied():
    assert selection.parse_harness_list(LIST) == [
        "global.share_is_cifs_mount", "global.server_disk_file_listed_on_client",
        "watched.create", "watched.delete",
        "matrix.dn_create.create_change", "matrix.dn_create.delete_change",
        "matrix.dn_delete.create_change", "matrix.dn_delete.delete_change"]


PROGRAMS = {"dnotify_cifs": ["watched.create", "watched.delete"],
            "share_basics": ["global.share_is_cifs_mount"]}


def test_select_whole_programs_or_single_cases():
    assert selection.select(PROGRAMS, None) == {"dnotify_cifs": [],
                                            "share_basics": []}
    assert selection.select(PROGRAMS, "dnotify") == {"dnotify_cifs": []}
    assert selection.select(PROGRAMS, "delete") == {
        "dnotify_cifs": ["watched.delete"]}
    assert selection.select(PROGRAMS, "*.watched.c*") == {
        "dnotify_cifs": ["watched.create"]}
    assert selection.select(PROGRAMS, "no_such_case") == {}


def test_all_ids_lists_programs_cases_and_checks():
    ids = selection.all_ids(PROGRAMS)
    assert ids[:3] == ["dnotify_cifs", "dnotify_cifs.watched.create",
                       "dnotify_cifs.watched.delete"]
    assert "console_client_no_splat" in ids and "kunit_boot" in ids


def test_select_several_patterns_separated_by_commas():
    programs = {"dnotify_cifs": ["watched.create"],
                "inotify_cifs": ["inotify.a", "optin.b"],
                "load_cifs": ["load.x"]}
    assert selection.select(programs, "dnotify_cifs,*optin*") == {
        "dnotify_cifs": [], "inotify_cifs": ["optin.b"]}
    assert selection.select(programs, "nothing,") == {}
