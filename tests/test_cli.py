import subprocess
import sys
from pathlib import Path

ORCH = Path(__file__).resolve().parent.parent / "orchestrate.py"


def run(*args, cache):
    return subprocess.run([sys.executable, str(ORCH), "--cache-dir", str(cache),
                           *args], capture_output=True, text=True, timeout=60)


def test_unknown_subcommand_is_usage_error(tmp_path):
    p = run("frobnicate", cache=tmp_path)
    assert p.returncode == 2 and "usage:" in p.stderr
    assert "Traceback" not in p.stderr


def test_unknown_flag_is_usage_error(tmp_path):
    p = run("up", "--no-such-flag", cache=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_status_when_down(tmp_path):
    p = run("status", cache=tmp_path)
    assert p.returncode == 0 and "down" in p.stdout


def test_commands_needing_a_run_fail_in_one_line(tmp_path):
    for args in (["pcap"], ["shell", "client"], ["exec", "server", "true"]):
        p = run(*args, cache=tmp_path)
        assert p.returncode == 2, args
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "Traceback" not in p.stderr


def test_shell_role_is_checked(tmp_path):
    p = run("shell", "router", cache=tmp_path)
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_version_names_the_series(tmp_path):
    p = run("--version", cache=tmp_path)
    assert p.returncode == 0 and "series v" in p.stdout


def test_verbose_after_the_subcommand(tmp_path):
    p = run("status", "-v", cache=tmp_path)
    assert p.returncode == 0 and "down" in p.stdout


def test_kernel_wants_a_verb(tmp_path):
    p = run("kernel", cache=tmp_path)
    assert p.returncode == 2 and "VERB" in p.stderr
    p = run("kernel", "frob", cache=tmp_path)
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_help_shows_defaults(tmp_path):
    p = run("test", "--help", cache=tmp_path)
    assert p.returncode == 0 and "(default: 4)" in p.stdout
    assert "default: None" not in p.stdout
