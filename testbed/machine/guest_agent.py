"""Talking to a running guest over unix sockets: QMP (the QEMU monitor) and
the QEMU guest agent (run a command in the guest, get status and output).
No network path to the guests exists, by design: these are the host's
only handles on them.
"""

import base64
import json
import socket
import time

from ..common.errors import TestbedError


class JsonChannel:
    """Newline-delimited JSON over a unix stream socket, with deadlines."""

    def __init__(self, path, timeout):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(self.path)
        except OSError as e:
            self.sock.close()
            raise TestbedError(f"cannot connect to {self.path}: {e.strerror}") \
                from None
        self.buf = b""

    def close(self):
        self.sock.close()

    def _silent(self):
        # QEMU serves one client per socket: a second one waits unanswered
        return (f"no answer on {self.path} (is another command, or a test "
                f"run, using this guest?)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, obj):
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def recv(self, deadline):
        """The next JSON object; bytes before it (0xff sync marks) dropped."""
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                line = line.lstrip(b"\xff").strip()
                if line:
                    try:
                        return json.loads(line)
                    except ValueError:
                        continue
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(self._silent())
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError(self._silent()) from None
            if not chunk:
                raise TestbedError(f"{self.path}: connection closed")
            self.buf += chunk


class Qmp(JsonChannel):
    """The QEMU monitor: stop, quit, set_link (fault tests)."""

    def __init__(self, path, timeout=10):
        super().__init__(path, timeout)
        deadline = time.monotonic() + timeout
        self.recv(deadline)                 # greeting
        self.command("qmp_capabilities")

    def command(self, execute, timeout=10, **args):
        msg = {"execute": execute}
        if args:
            msg["arguments"] = args
        self.send(msg)
        deadline = time.monotonic() + timeout
        while True:
            reply = self.recv(deadline)
            if "event" in reply:
                continue
            if "error" in reply:
                raise TestbedError(f"QMP {execute}: "
                                   f"{reply['error'].get('desc')}")
            return reply.get("return")


class GuestAgent(JsonChannel):
    """qemu-guest-agent over virtio-serial."""

    def __init__(self, path, timeout=10):
        super().__init__(path, timeout)
        self.sync(timeout)

    def sync(self, timeout):
        """Resynchronise the stream: drop any reply left by an earlier
        client that went away mid-command."""
        token = int(time.monotonic() * 1000) & 0x7fffffff
        self.sock.sendall(b"\xff")
        self.send({"execute": "guest-sync-delimited",
                   "arguments": {"id": token}})
        deadline = time.monotonic() + timeout
        while True:
            reply = self.recv(deadline)
            if reply.get("return") == token:
                return

    def command(self, name, timeout=10, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.send(msg)
        reply = self.recv(time.monotonic() + timeout)
        if "error" in reply:
            raise TestbedError(f"guest agent {name}: "
                               f"{reply['error'].get('desc')}")
        return reply.get("return")

    def spawn(self, argv, timeout, stdin=None):
        """Start argv in the guest, bounded by `timeout` seconds there (the
        guest's coreutils timeout kills it); its pid, for status() on this
        or a later connection (the agent keeps its status and output until
        asked)."""
        wrapped = ["timeout", "-k", "5", str(int(timeout))] + list(argv)
        args = {"path": wrapped[0], "arg": wrapped[1:], "capture-output": True}
        if stdin is not None:
            args["input-data"] = base64.b64encode(stdin).decode()
        return self.command("guest-exec", **args)["pid"]

    def status(self, pid):
        """(exit status, stdout bytes, stderr bytes) of a spawned command
        that has ended, or None while it runs; 124 = timed out."""
        st = self.command("guest-exec-status", pid=pid)
        if not st.get("exited"):
            return None
        out = base64.b64decode(st.get("out-data", ""))
        err = base64.b64decode(st.get("err-data", ""))
        code = st.get("exitcode")
        if code is None:
            code = 128 + st.get("signal", 0)
        return code, out, err
