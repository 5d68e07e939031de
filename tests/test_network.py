import pytest

from testbed import network, vm
from testbed.errors import TestbedError


def test_status_names():
    assert network.status_name("0x00000103") == "STATUS_PENDING"
    assert network.status_name(0x10C) == "STATUS_NOTIFY_ENUM_DIR"
    assert network.status_name("0xdeadbeef") == "0xdeadbeef"


def test_summary_rows_two_pdus_in_one_frame():
    row = "\t".join(["1.5", network.CLIENT_IP, "5,15", "0,0", "7,8", "", "dir"])
    resp = "\t".join(["1.6", network.SERVER_IP, "15", "1", "8", "0x00000103", ""])
    lines = network.summarize_rows(row + "\n" + resp + "\n")
    assert len(lines) == 3
    assert "C->S" in lines[0] and "CREATE" in lines[0] and "dir" in lines[0]
    assert "CHANGE_NOTIFY" in lines[1] and "mid=8" in lines[1]
    assert "S->C" in lines[2] and "STATUS_PENDING" in lines[2]


def test_summary_skips_non_smb_rows():
    assert network.summarize_rows("0.1\t10.0.77.1\t\t\t\t\t\n") == []


def test_missing_or_empty_capture_is_a_clear_error(tmp_path):
    with pytest.raises(TestbedError, match="no capture"):
        network.pcap_summary(tmp_path / "none.pcap")
    empty = tmp_path / "e.pcap"
    empty.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))
    with pytest.raises(TestbedError, match="empty"):
        network.pcap_summary(empty)


def test_socket_path_too_long(tmp_path):
    with pytest.raises(TestbedError, match="too long"):
        network.check_socket_path(tmp_path / ("x" * 120))


def test_guests_have_no_nic_that_routes_out(tmp_path):
    for role in vm.ROLES:
        argv = vm.qemu_argv(role, tmp_path, tmp_path, "tcg")
        joined = " ".join(argv)
        assert "-nic" not in argv and "user," not in joined
        assert "tap" not in joined and "bridge" not in joined
        netdevs = [argv[i + 1] for i, a in enumerate(argv) if a == "-netdev"]
        assert len(netdevs) == 1 and netdevs[0].startswith("stream,")
        assert "addr.type=unix" in netdevs[0]
        assert "-nodefaults" in argv


def test_only_the_client_nic_is_captured(tmp_path):
    client = " ".join(vm.qemu_argv("client", tmp_path, tmp_path, "tcg"))
    server = " ".join(vm.qemu_argv("server", tmp_path, tmp_path, "tcg"))
    assert "filter-dump" in client and "client.pcap" in client
    assert "filter-dump" not in server
