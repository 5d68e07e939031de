"""An interactive root shell on a guest's hvc0 console (agetty autologin),
relayed between the user's terminal and the console's unix socket.
Ctrl-] leaves, like telnet."""

import os
import select
import socket
import sys
import termios
import tty

from ..common.errors import TestbedError

ESCAPE = b"\x1d"  # Ctrl-]


def attach(sock_path):
    """Relay the terminal to the guest console until Ctrl-] or EOF."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(sock_path))
    except OSError as e:
        raise TestbedError(f"cannot attach to {sock_path}: {e.strerror}") \
            from None
    fd = sys.stdin.fileno()
    interactive = os.isatty(fd)
    print("attached; Ctrl-] to leave", file=sys.stderr)
    old = termios.tcgetattr(fd) if interactive else None
    try:
        if interactive:
            tty.setraw(fd)
        s.sendall(b"\r")
        while True:
            ready, _, _ = select.select([fd, s], [], [])
            if s in ready:
                data = s.recv(4096)
                if not data:
                    break
                os.write(sys.stdout.fileno(), data)
            if fd in ready:
                data = os.read(fd, 1024)
                if not data or (interactive and ESCAPE in data):
                    break
                s.sendall(data)
    finally:
        if old is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
        s.close()
    print("\ndetached", file=sys.stderr)
