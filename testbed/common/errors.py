"""Errors the command line turns into one-line messages and exit codes."""


class TestbedError(Exception):
    """A failure to report in one line (plus optional detail), exit 1."""

    exit_code = 1

    def __init__(self, message, detail=""):
        super().__init__(message)
        self.detail = detail


class UsageError(TestbedError):
    """Bad input or a missing host prerequisite the user must fix, exit 2."""

    exit_code = 2
