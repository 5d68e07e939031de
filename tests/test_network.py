import pytest

from testbed.machine import network
from testbed.machine import vm
from testbed.common.errors import TestbedError


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
