"""The private segment's addresses and the ports of the testbed's own
programs on it: what the machine sets up, the guests' programs use and the
capture reads. client-tests/lib/testbed.h holds the same numbers for C."""

SERVER_IP = "10.0.77.1"
CLIENT_IP = "10.0.77.2"
SERVERD_PORT = 7070       # tb-serverd on the server (client-tests/lib/testbed.h)
# tb-sigproxy before smbd: mode -> port (client-tests/notify_signing.c,
# notify_order.c)
SIGPROXY_PORTS = {"relay": 4447, "spoil": 4448, "hold": 4449}
PREFIX = 24
# The guests' test markers go to the segment's broadcast address, so that
# nothing answers them and the capture holds them on its own clock.
MARKER_ADDR = "10.0.77.255"
# tb-mark's test markers: UDP to MARKER_ADDR on this port.
MARKER_PORT = 7099
