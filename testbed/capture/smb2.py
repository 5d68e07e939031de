"""SMB2 numbers a capture shows, by name: commands, NT status codes,
CHANGE_NOTIFY completion-filter bits and FILE_NOTIFY_INFORMATION actions.

tshark prints numbers in -T fields output; the timeline and the picture
print the names the specifications use, so a reader can look them up.
"""

# SMB2 command numbers (MS-SMB2 2.2.1.2).
COMMANDS = {
    0: "NEGOTIATE", 1: "SESSION_SETUP", 2: "LOGOFF", 3: "TREE_CONNECT",
    4: "TREE_DISCONNECT", 5: "CREATE", 6: "CLOSE", 7: "FLUSH", 8: "READ",
    9: "WRITE", 10: "LOCK", 11: "IOCTL", 12: "CANCEL", 13: "ECHO",
    14: "QUERY_DIRECTORY", 15: "CHANGE_NOTIFY", 16: "QUERY_INFO",
    17: "SET_INFO", 18: "OPLOCK_BREAK",
}
NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT, TREE_DISCONNECT = 0, 1, 2, 3, 4
CREATE, CLOSE, FLUSH, READ, WRITE, LOCK, IOCTL, CANCEL, ECHO = range(5, 14)
QUERY_DIRECTORY, CHANGE_NOTIFY, QUERY_INFO, SET_INFO, OPLOCK_BREAK = range(14, 19)

STATUS_SUCCESS = 0x00000000
STATUS_PENDING = 0x00000103

# NT status codes (MS-ERREF 2.3.1) seen on this testbed, notify's first.
NT_STATUS = {
    0x00000000: "STATUS_SUCCESS", 0x00000103: "STATUS_PENDING",
    0x0000010C: "STATUS_NOTIFY_ENUM_DIR", 0x0000010B: "STATUS_NOTIFY_CLEANUP",
    0xC0000120: "STATUS_CANCELLED", 0xC0000002: "STATUS_NOT_IMPLEMENTED",
    0xC0000016: "STATUS_MORE_PROCESSING_REQUIRED",
    0xC0000034: "STATUS_OBJECT_NAME_NOT_FOUND",
    0xC0000035: "STATUS_OBJECT_NAME_COLLISION",
    0xC000003A: "STATUS_OBJECT_PATH_NOT_FOUND",
    0xC0000033: "STATUS_OBJECT_NAME_INVALID", 0x80000006: "STATUS_NO_MORE_FILES",
    0xC0000022: "STATUS_ACCESS_DENIED", 0xC000000D: "STATUS_INVALID_PARAMETER",
    0xC0000128: "STATUS_FILE_CLOSED", 0xC00000BB: "STATUS_NOT_SUPPORTED",
    0xC0000023: "STATUS_BUFFER_TOO_SMALL", 0x80000005: "STATUS_BUFFER_OVERFLOW",
    0xC0000011: "STATUS_END_OF_FILE", 0xC000000F: "STATUS_NO_SUCH_FILE",
    0xC0000043: "STATUS_SHARING_VIOLATION", 0xC0000008: "STATUS_INVALID_HANDLE",
    0xC0000056: "STATUS_DELETE_PENDING", 0xC0000101: "STATUS_DIRECTORY_NOT_EMPTY",
    0xC0000103: "STATUS_NOT_A_DIRECTORY", 0xC00000BA: "STATUS_FILE_IS_A_DIRECTORY",
    0xC0000225: "STATUS_NOT_FOUND", 0xC00000C9: "STATUS_NETWORK_NAME_DELETED",
    0xC0000203: "STATUS_USER_SESSION_DELETED",
    0xC000035C: "STATUS_NETWORK_SESSION_EXPIRED",
    0xC000009A: "STATUS_INSUFFICIENT_RESOURCES",
    0xC0000010: "STATUS_INVALID_DEVICE_REQUEST",
    0xC000019C: "STATUS_FS_DRIVER_REQUIRED", 0x8000002D: "STATUS_STOPPED_ON_SYMLINK",
}

# CHANGE_NOTIFY CompletionFilter bits (MS-SMB2 2.2.35).
COMPLETION_FILTER = [
    (0x001, "FILE_NAME"), (0x002, "DIR_NAME"), (0x004, "ATTRIBUTES"),
    (0x008, "SIZE"), (0x010, "LAST_WRITE"), (0x020, "LAST_ACCESS"),
    (0x040, "CREATION"), (0x080, "EA"), (0x100, "SECURITY"),
    (0x200, "STREAM_NAME"), (0x400, "STREAM_SIZE"), (0x800, "STREAM_WRITE"),
]
FILTER_PREFIX = "FILE_NOTIFY_CHANGE_"

# FILE_NOTIFY_INFORMATION Action values (MS-FSCC 2.7.1).
ACTIONS = {
    1: "ADDED", 2: "REMOVED", 3: "MODIFIED", 4: "RENAMED_OLD_NAME",
    5: "RENAMED_NEW_NAME", 6: "ADDED_STREAM", 7: "REMOVED_STREAM",
    8: "MODIFIED_STREAM", 9: "REMOVED_BY_DELETE", 10: "ID_NOT_TUNNELLED",
    11: "TUNNELLED_ID_COLLISION",
}

# FileId of the operations after a CREATE in a related compound: "the
# handle the CREATE just opened" (MS-SMB2 3.2.4.1.4).
RELATED_FID = "ffffffff-ffff-ffff-ffff-ffffffffffff"


def to_int(value):
    """tshark's '0x00000103', '259' or 259 -> 259; None when not a number,
    so a missing field never turns into a misleading 0."""
    if isinstance(value, int):
        return value
    try:
        return int(value, 0)
    except (TypeError, ValueError):
        return None


def status_name(value):
    """'0x00000103' or 259 -> 'STATUS_PENDING' (hex when unknown): status
    codes are read by name in MS-ERREF, never by number."""
    n = to_int(value)
    if n is None:
        return str(value)
    return NT_STATUS.get(n, f"0x{n:08x}")


def command_name(value):
    """15 -> 'CHANGE_NOTIFY' ('cmdN' when unknown)."""
    n = to_int(value)
    return COMMANDS.get(n, f"cmd{value}")


def filter_names(value):
    """0x3 -> 'FILE_NOTIFY_CHANGE_FILE_NAME|DIR_NAME': the prefix once, so a
    request asking for everything still fits on a line."""
    n = to_int(value)
    if n is None:
        return ""
    names = [name for bit, name in COMPLETION_FILTER if n & bit]
    rest = n & ~sum(bit for bit, _ in COMPLETION_FILTER)
    if rest:
        names.append(f"0x{rest:x}")
    return FILTER_PREFIX + "|".join(names) if names else "0"


def action_name(value):
    """1 -> 'ADDED' ('ACTION_0xN' when unknown)."""
    n = to_int(value)
    return ACTIONS.get(n, f"ACTION_{value}")


def short_fid(fid):
    """'18b622e6-0000-0000-f39f-e2cb00000000' -> '18b622e6': Samba's
    persistent part, enough to tell handles apart in a timeline."""
    if not fid:
        return "?"
    if fid == RELATED_FID:
        return "related"
    return fid.split("-")[0]
