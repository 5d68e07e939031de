"""Assigning tshark's flattened field values to the SMB2 PDUs of a frame.

tshark -T fields prints, per frame, all occurrences of a field in one
column: a compound frame (CREATE + QUERY_INFO + CLOSE), or a TCP segment
carrying several PDUs (two CHANGE_NOTIFY responses and a CLOSE response),
gives 'smb2.cmd' = [5, 16, 6] and 'smb2.fid' = [fid, fid] without saying
which PDU each FileId came from. -T pdml or -T ek keep the structure but
take more than twice as long on a whole run (-T ek: 48 s for the 29 MB
capture of a full test run, -T fields: 18 to 21 s; measured with tshark
4.0 on the 2-core host, QEMU running), so this module recovers the
structure from the flat lists:

* header fields (command, flags, message id) occur exactly once per PDU,
  the async id once per async PDU, the status once per response (and per
  request only for SMB 2.0.2/2.1), the completion filter and watch-tree
  flag once per CHANGE_NOTIFY request: they line up by position;
* CHANGE_NOTIFY response entries (next offset, action) end each PDU's list
  with a next offset of 0, which splits them between responses;
* FileIds and file names occur a number of times that depends on the
  command and its data (a CREATE request carries a zero FileId in a
  durable-handle context or none, an empty CREATE name prints no name, a
  QUERY_INFO response one name or none): each PDU gets the count, or the
  least and most, its command implies. Exact counts are taken from both
  ends of the list; what is left goes to a single inexact PDU, or to
  several when only one split adds up (all at their least or all at their
  most). Otherwise those PDUs get None ('could not tell', printed '?'),
  and when the counts cannot add up the whole frame's values are None.
  Values are never handed to a PDU on a guess.
"""

from . import smb2

# Requests that name an open handle by FileId (exactly one smb2.fid).
HANDLE_REQUESTS = {smb2.CLOSE, smb2.FLUSH, smb2.READ, smb2.WRITE, smb2.LOCK,
                   smb2.QUERY_DIRECTORY, smb2.CHANGE_NOTIFY, smb2.QUERY_INFO,
                   smb2.SET_INFO}
NO_HANDLE = {smb2.NEGOTIATE, smb2.SESSION_SETUP, smb2.LOGOFF, smb2.TREE_CONNECT,
             smb2.TREE_DISCONNECT, smb2.CANCEL, smb2.ECHO}
STATUS_BUFFER_OVERFLOW = 0x80000005
FILE_INFO_CLASS = 0x01
# SET_INFO file information classes carrying a file name (MS-FSCC 2.4):
# FileRenameInformation, FileLinkInformation.
NAMED_SET_INFO = {0x0A, 0x0B}
TRUE = ("1", "True", "true")      # how tshark prints a set boolean
ONE_OR_NONE = (0, 1)


def _has_body(status):
    """A response whose body is the command's own, not an ERROR body."""
    return status in (None, smb2.STATUS_SUCCESS, STATUS_BUFFER_OVERFLOW)


def fid_count(cmd, is_response, status):
    """How many smb2.fid values tshark prints for this PDU: a number, a
    (least, most) pair, or None for any number."""
    if not is_response:
        if cmd in HANDLE_REQUESTS:
            return 1
        if cmd in (smb2.CREATE, smb2.OPLOCK_BREAK):
            return ONE_OR_NONE          # a durable-handle context; a lease break
        if cmd == smb2.IOCTL:
            return (1, None)            # its own, and any in its input
        return 0 if cmd in NO_HANDLE else None
    if cmd == smb2.CREATE:
        return 1 if status == smb2.STATUS_SUCCESS else 0
    if cmd in (smb2.IOCTL, smb2.OPLOCK_BREAK):
        return ONE_OR_NONE if _has_body(status) else 0
    return 0 if cmd in smb2.COMMANDS else None


def name_count(cmd, is_response, status, entries, info_level=None):
    """How many smb2.filename values tshark prints for this PDU (entries:
    its CHANGE_NOTIFY entries, None if unknown; info_level: a SET_INFO's
    file information class): a number, a (least, most) pair, or None for
    any number (a directory listing)."""
    if not is_response:
        if cmd == smb2.SET_INFO and info_level is not None:
            return 1 if info_level in NAMED_SET_INFO else 0
        if cmd in (smb2.CREATE, smb2.SET_INFO):
            return ONE_OR_NONE          # an empty name prints nothing
        if cmd == smb2.IOCTL:
            return None
        return 0 if cmd in smb2.COMMANDS else None
    if not _has_body(status):
        return 0
    if cmd == smb2.CHANGE_NOTIFY:
        return None if entries is None else len(entries)
    if cmd == smb2.QUERY_INFO:
        return ONE_OR_NONE              # FileAllInformation has one name
    if cmd in (smb2.QUERY_DIRECTORY, smb2.IOCTL):
        return None
    return 0 if cmd in smb2.COMMANDS else None


def _bounds(count):
    """A count as (least, most): an int is exact, None is 'any number'
    (most None), a (least, most) pair is kept."""
    if count is None:
        return 0, None
    if isinstance(count, int):
        return count, count
    return count


def _take(values, bounds, each):
    """values split in order, each PDU getting each(least, most) values."""
    parts, pos = [], 0
    for least, most in bounds:
        n = each(least, most)
        parts.append(values[pos:pos + n])
        pos += n
    return parts


def split_by_counts(values, counts, divide=None):
    """Split one field's flat values between PDUs expecting counts[i]
    values each: an int, a (least, most) pair, or None for any number.
    Returns one list per PDU, None where the values cannot be attributed.
    Exact counts are taken from both ends; what is left goes to a single
    inexact PDU, or to several when only one split fits (all at their
    least, or all at their most); divide(values, k), if given, may split
    the rest between k PDUs of any number (the others there expecting 0)."""
    n, bounds = len(counts), [_bounds(c) for c in counts]
    result = [None] * n
    front, pos = 0, 0
    while front < n and bounds[front][0] == bounds[front][1]:
        if pos + bounds[front][0] > len(values):
            return [None] * n
        result[front] = values[pos:pos + bounds[front][0]]
        pos += bounds[front][0]
        front += 1
    if front == n:
        return result if pos == len(values) else [None] * n
    back, end = n - 1, len(values)
    while back > front and bounds[back][0] == bounds[back][1]:
        if end - bounds[back][0] < pos:
            return [None] * n
        result[back] = values[end - bounds[back][0]:end]
        end -= bounds[back][0]
        back -= 1
    middle, inner = values[pos:end], bounds[front:back + 1]
    least = sum(lo for lo, _ in inner)
    most = None if any(hi is None for _, hi in inner) else sum(hi for _, hi in inner)
    if len(middle) < least or (most is not None and len(middle) > most):
        return [None] * n
    if front == back:
        parts = [middle]
    elif len(middle) == least:
        parts = _take(middle, inner, lambda lo, hi: lo)
    elif len(middle) == most:
        parts = _take(middle, inner, lambda lo, hi: hi)
    elif divide and all(b in ((0, None), (0, 0)) for b in inner):
        found = divide(middle, sum(1 for b in inner if b == (0, None)))
        parts = found and [[] if b == (0, 0) else found.pop(0) for b in inner]
    else:
        parts = None
    if parts:
        result[front:back + 1] = parts
    else:                           # where the rest goes is open; none goes to
        for i in range(front, back + 1):  # a PDU that takes none
            if bounds[i] == (0, 0):
                result[i] = []
    return result


def divide_notify_entries(entries, k):
    """Split (next_offset, action) entries between k CHANGE_NOTIFY
    responses: each response's last entry has next offset 0. None when
    that does not give exactly k groups (an empty response, say)."""
    groups, current = [], []
    for entry in entries:
        current.append(entry)
        if entry[0] == 0:
            groups.append(current)
            current = []
    if current or len(groups) != k:
        return None
    return groups


def positional(values, wanted):
    """One value per PDU where wanted[i] is true, in order (None for the
    others); all None when the count does not match."""
    if len(values) != sum(1 for w in wanted if w):
        return [None] * len(wanted)
    it = iter(values)
    return [next(it) if w else None for w in wanted]


def assign(columns):
    """Per-PDU field values of one frame from its flattened columns (field
    name -> list of strings). Returns (list of dicts, problems), one dict
    per smb2.cmd value; problems name the fields that could not be
    attributed, for a warning."""
    cmds = [smb2.to_int(c) for c in columns.get("smb2.cmd", [])]
    n = len(cmds)
    if n == 0:
        return [], []
    if n == 1:
        return [_single(columns, cmds[0])], []
    problems = []

    def line_up(name, wanted=None):
        """A header-like field: one value per PDU (or per wanted PDU)."""
        values = columns.get(name, [])
        if wanted is None:
            wanted = [True] * n
        got = positional(values, wanted)
        if values and all(v is None for v in got):
            problems.append(name)
        return got

    responses = [v in TRUE for v in line_up("smb2.flags.response")]
    asyncs = [v in TRUE for v in line_up("smb2.flags.async")]
    statuses_raw = columns.get("smb2.nt_status", [])
    statuses = (positional(statuses_raw, [True] * n) if len(statuses_raw) == n
                else line_up("smb2.nt_status", responses))
    statuses = [smb2.to_int(s) for s in statuses]
    notify_req = [c == smb2.CHANGE_NOTIFY and not r for c, r in zip(cmds, responses)]
    pdus = [{"command": c, "is_response": r, "is_async": a, "status": s}
            for c, r, a, s in zip(cmds, responses, asyncs, statuses)]
    for key, field_name, wanted in (
            ("msg_id", "smb2.msg_id", None), ("async_id", "smb2.aid", asyncs),
            ("signed", "smb2.flags.signature", None),
            ("completion_filter", "smb.nt.notify.completion_filter", notify_req),
            ("watch_tree", "smb2.notify.watch_tree", notify_req)):
        for pdu, value in zip(pdus, line_up(field_name, wanted)):
            pdu[key] = value
    _assign_info_levels(columns, pdus)
    _assign_entries(columns, pdus, problems)
    _assign_counted(columns, pdus, "fids", "smb2.fid", problems,
                    lambda p: fid_count(p["command"], p["is_response"], p["status"]))
    _assign_counted(columns, pdus, "names", "smb2.filename", problems,
                    lambda p: name_count(p["command"], p["is_response"],
                                         p["status"], p["entries"],
                                         p["info_level"]))
    for pdu in pdus:
        pdu["notify_entries"] = _pair_entries(pdu.pop("entries"), pdu)
    return pdus, problems


def _single(columns, cmd):
    """The one PDU of a frame: every value is its own (most frames)."""
    def one(name):
        values = columns.get(name)
        return values[0] if values else None
    status = smb2.to_int(one("smb2.nt_status"))
    pdu = {"command": cmd, "is_response": one("smb2.flags.response") in TRUE,
           "is_async": one("smb2.flags.async") in TRUE, "status": status,
           "msg_id": one("smb2.msg_id"), "async_id": one("smb2.aid"),
           "signed": one("smb2.flags.signature"),
           "completion_filter": one("smb.nt.notify.completion_filter"),
           "watch_tree": one("smb2.notify.watch_tree"),
           "fids": columns.get("smb2.fid", []),
           "names": columns.get("smb2.filename", [])}
    offsets = columns.get("smb2.notify.next_offset", [])
    actions = [smb2.to_int(v) for v in columns.get("smb2.notify.action", [])]
    entries = None if len(offsets) != len(actions) else list(zip(offsets, actions))
    pdu["notify_entries"] = _pair_entries(entries, pdu)
    return pdu


def _assign_info_levels(columns, pdus):
    """The file information class of QUERY_INFO and SET_INFO requests
    (one smb2.class each, one infolevel per FILE_INFO class), so a
    SET_INFO that renames is known to carry a name and one that deletes
    is not."""
    wanted = [p["command"] in (smb2.QUERY_INFO, smb2.SET_INFO)
              and not p["is_response"] for p in pdus]
    classes = [smb2.to_int(c) for c in
               positional(columns.get("smb2.class", []), wanted)]
    levels = positional(columns.get("smb2.file_info.infolevel", []),
                        [c == FILE_INFO_CLASS for c in classes])
    for pdu, cls, level in zip(pdus, classes, levels):
        pdu["info_level"] = smb2.to_int(level) if cls == FILE_INFO_CLASS else None


def _assign_entries(columns, pdus, problems):
    """CHANGE_NOTIFY response entries as (next_offset, action) per PDU."""
    offsets = [smb2.to_int(v) for v in columns.get("smb2.notify.next_offset", [])]
    actions = [smb2.to_int(v) for v in columns.get("smb2.notify.action", [])]
    counts = [None if p["command"] == smb2.CHANGE_NOTIFY and p["is_response"]
              and _has_body(p["status"]) else 0 for p in pdus]
    if len(offsets) != len(actions):
        parts = [None if c is None else [] for c in counts]
    elif len(pdus) == 1:
        parts = [list(zip(offsets, actions))]
    else:
        parts = split_by_counts(list(zip(offsets, actions)), counts,
                                divide_notify_entries)
    if actions and any(part is None for part in parts):
        problems.append("smb2.notify.action")
    for pdu, part in zip(pdus, parts):
        pdu["entries"] = part


def _assign_counted(columns, pdus, key, field_name, problems, count_of):
    """A field whose count per PDU depends on the command (see above)."""
    values = columns.get(field_name, [])
    if len(pdus) == 1:
        parts = [values]
    else:
        parts = split_by_counts(values, [count_of(p) for p in pdus])
    if values and any(part is None for part in parts):
        problems.append(field_name)
    for pdu, part in zip(pdus, parts):
        pdu[key] = part


def _pair_entries(entries, pdu):
    """(action, name) pairs of a notify response; names None when the
    frame's names could not be attributed or do not match the entries."""
    if entries is None:
        return None
    names = pdu.get("names")
    if names is None or len(names) != len(entries):
        return [(action, None) for _, action in entries]
    return [(action, name) for (_, action), name in zip(entries, names)]
