"""`orchestrate.py pcap` end to end on generated runs: the timeline, -k,
--notify, --svg, --path, --raw, and one-line errors with their exit codes."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from test_pcapgen import needs_tshark, write_scenario

ORCH = Path(__file__).resolve().parents[2] / "orchestrate.py"
TEST_ID = "dnotify_cifs.watched.server_disk_create"


def make_run(cache, name="20260101-000000", pcap_bytes=None):
    """A run directory with the scenario's capture (or given bytes)."""
    run = cache / "runs" / name
    run.mkdir(parents=True)
    if pcap_bytes is None:
        write_scenario(run / "client.pcap")
    else:
        (run / "client.pcap").write_bytes(pcap_bytes)
    latest = cache / "runs" / "latest"
    if latest.is_symlink():
        latest.unlink()
    latest.symlink_to(name)
    return run


def pcap(cache, *args):
    return subprocess.run([sys.executable, str(ORCH), "--cache-dir", str(cache),
                           "pcap", *args], capture_output=True, text=True,
                          timeout=120)


@needs_tshark
def test_timeline_of_the_latest_run_with_latency_summary(tmp_path):
    make_run(tmp_path)
    p = pcap(tmp_path)
    assert p.returncode == 0, p.stderr
    assert "STATUS_PENDING" in p.stdout and "RENAMED_NEW_NAME new" in p.stdout
    assert f"begin {TEST_ID}#2" in p.stdout
    summary = p.stdout.splitlines()[-1].split()
    assert summary == [TEST_ID, "1", "3.0/3.0/3.0", "12.0/12.0/12.0"]


@needs_tshark
def test_k_keeps_one_occurrence(tmp_path):
    make_run(tmp_path)
    p = pcap(tmp_path, "-k", "*#2")
    assert p.returncode == 0, p.stderr
    frames = [line.split()[1] for line in p.stdout.splitlines() if line.strip()]
    assert frames == ["21", "22"]


@needs_tshark
def test_k_without_match_is_one_line_and_exit_2(tmp_path):
    make_run(tmp_path)
    p = pcap(tmp_path, "-k", "nosuchtest")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "no test matches 'nosuchtest'" in p.stderr and TEST_ID in p.stderr


@needs_tshark
def test_notify_hides_other_traffic(tmp_path):
    make_run(tmp_path)
    p = pcap(tmp_path, "--notify")
    assert p.returncode == 0, p.stderr
    assert "dir\\sub" not in p.stdout and "CANCEL" in p.stdout
    assert "CREATE" in p.stdout and "CLOSE" in p.stdout


@needs_tshark
def test_svg_is_written_for_the_selection(tmp_path):
    make_run(tmp_path)
    out = tmp_path / "n.svg"
    p = pcap(tmp_path, "-k", TEST_ID, "--svg", str(out))
    assert p.returncode == 0, p.stderr
    assert "18 messages" in p.stdout
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")


def test_path_lists_capture_then_slices(tmp_path):
    run = make_run(tmp_path, pcap_bytes=b"")
    assert pcap(tmp_path, "--path").stdout.split() == [str(run / "client.pcap")]
    (run / "slices").mkdir()
    for name in ("a.one.pcap", "b.two.pcap", "b.two#2.pcap"):
        (run / "slices" / name).write_bytes(b"")
    p = pcap(tmp_path, "--path")
    assert p.stdout.split() == [str(run / "client.pcap")] + [
        str(run / "slices" / n) for n in ("a.one.pcap", "b.two#2.pcap", "b.two.pcap")]
    assert pcap(tmp_path, "--path", "-k", "a.*").stdout.split() == \
        [str(run / "slices" / "a.one.pcap")]


@needs_tshark
def test_raw_passes_tshark_through(tmp_path):
    make_run(tmp_path)
    p = pcap(tmp_path, "--raw", "-Y", "udp.dstport == 7099", "-T", "fields",
             "-e", "frame.number")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["4", "9", "11", "20", "21"]
    bad = pcap(tmp_path, "-k", "x", "--raw", "-c", "1")
    assert bad.returncode == 2 and "--raw" in bad.stderr


def test_run_without_capture_is_one_line_exit_1(tmp_path):
    run = make_run(tmp_path, pcap_bytes=b"")
    (run / "client.pcap").unlink()
    p = pcap(tmp_path)
    assert p.returncode == 1 and "no capture at" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_empty_capture_is_one_line_exit_1(tmp_path):
    make_run(tmp_path, pcap_bytes=b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00" + bytes(16))
    p = pcap(tmp_path, "--notify")
    assert p.returncode == 1 and "empty" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@needs_tshark
def test_truncated_capture_prints_what_was_read_and_warns(tmp_path):
    run = make_run(tmp_path)
    whole = (run / "client.pcap").read_bytes()
    (run / "client.pcap").write_bytes(whole[:-30])
    p = pcap(tmp_path)
    assert p.returncode == 0
    assert "cut short" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "STATUS_CANCELLED" in p.stdout


def test_no_tshark_is_one_line_exit_2(tmp_path):
    make_run(tmp_path)
    p = subprocess.run([sys.executable, str(ORCH), "--cache-dir", str(tmp_path),
                        "pcap"], capture_output=True, text=True, timeout=60,
                       env={"PATH": str(tmp_path / "no-bin")})
    assert p.returncode == 2 and "tshark is not installed" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
