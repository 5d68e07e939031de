"""client-tests/'s Makefile names its tests and its helpers apart: each
test program is a kselftest harness test at the top of client-tests/,
each helper lives under helpers/<where it runs>/ and is no test, and the
suite runs only what `make list` prints."""
import re
import subprocess
from pathlib import Path

CLIENT_TESTS = Path(__file__).resolve().parent.parent / "client-tests"


def make_var(name):
    text = (CLIENT_TESTS / "Makefile").read_text().replace("\\\n", " ")
    return re.search(rf"^{name} := (.*)$", text, re.M).group(1).split()


def test_each_test_program_is_a_harness_test_and_listed():
    listed = set(make_var("TEST_PROGS"))
    found = {p.stem for p in CLIENT_TESTS.glob("*.c")}
    assert found == listed
    for name in listed:
        assert "TEST_HARNESS_MAIN" in (CLIENT_TESTS / f"{name}.c").read_text()


def test_each_helper_is_listed_for_where_it_runs_and_is_no_test():
    for where in ("client", "server", "bench"):
        listed = set(make_var(f"{where.upper()}_HELPERS"))
        found = CLIENT_TESTS.glob(f"helpers/{where}/*.c")
        assert {p.stem for p in found} == listed, where
        for p in CLIENT_TESTS.glob(f"helpers/{where}/*.c"):
            assert "TEST_HARNESS_MAIN" not in p.read_text(), p.name


def test_make_list_prints_the_tests_only(tmp_path):
    out = subprocess.run(["make", "-s", "-C", str(CLIENT_TESTS), "list",
                          "KSFT_DIR=/nonexistent"], capture_output=True,
                         text=True, timeout=30, check=True).stdout.split()
    assert out == make_var("TEST_PROGS")
    assert not [n for n in out if n.startswith("tb-")]


def test_an_unlisted_program_stops_the_build(tmp_path):
    copy = tmp_path / "client-tests"
    subprocess.run(["cp", "-a", str(CLIENT_TESTS), str(copy)], check=True)
    (copy / "helpers" / "client" / "tb-stray.c").write_text("int main(){}\n")
    p = subprocess.run(["make", "-s", "-C", str(copy), "list",
                        "KSFT_DIR=/nonexistent"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode != 0 and "tb-stray" in p.stderr


def test_the_build_is_keyed_by_the_sources_not_by_timestamps(tmp_path):
    from testbed.machine.client_programs import sources_key
    repo = tmp_path / "repo"
    (repo / "client-tests" / "build").mkdir(parents=True)
    ksft = tmp_path / "ksft"
    ksft.mkdir()
    (ksft / "kselftest_harness.h").write_text("/* harness */\n")
    src = repo / "client-tests" / "remote_watch.c"
    src.write_text("TEST(a) {}\n")
    first = sources_key(repo, ksft)
    (repo / "client-tests" / "build" / "remote_watch").write_text("elf")
    assert sources_key(repo, ksft) == first
    src.write_text("TEST(b) {}\n")
    assert sources_key(repo, ksft) != first
    src.write_text("TEST(a) {}\n")
    assert sources_key(repo, ksft) == first
    (ksft / "kselftest_harness.h").write_text("/* newer harness */\n")
    assert sources_key(repo, ksft) != first
