"""The parity table: the lines "# parity|scenario|source|api|tmpfs|cifs|
verdict" that client-tests/parity.c prints, one per API and change, made
into a Markdown table (parity.md in the run's directory; docs/parity.md is
one of them, kept). A cell is the events a watcher got, in order: on a
tmpfs with the change made locally, and on the CIFS mount with the change
made on the server's disk ("disk") or by a second SMB client ("client");
the verdict is "same", a named difference's reason, or DIFFERS."""

import re

ROW = re.compile(r"#\s*parity\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|(.*)$")
HEADER = ("| change | from | API | tmpfs, made locally | CIFS | verdict |\n"
          "| --- | --- | --- | --- | --- | --- |\n")


def rows(ktap_text):
    """[(scenario, source, api, tmpfs, cifs, verdict)] in the order printed;
    a case run twice (--repeat) keeps its last lines."""
    found = {}
    for line in ktap_text.splitlines():
        m = ROW.search(line)
        if m:
            cells = tuple(c.strip() for c in m.groups())
            found[cells[:3]] = cells
    return list(found.values())


def _cell(text):
    """A cell's text, safe inside a Markdown table."""
    return text.replace("|", "\\|") if text else "-"


def table(found):
    """The Markdown table of `found` (rows()), with the count of each verdict
    kind first; '' when there is none."""
    if not found:
        return ""
    same = sum(1 for r in found if r[5] == "same")
    differs = sum(1 for r in found if r[5] == "DIFFERS")
    named = len(found) - same - differs
    lines = [f"{len(found)} cells: {same} the same, {named} differing with a "
             f"named reason, {differs} differing without one.\n\n", HEADER]
    for scenario, source, api, tmpfs, cifs, verdict in found:
        lines.append(f"| {_cell(scenario)} | {_cell(source)} | {_cell(api)} | "
                     f"{_cell(tmpfs)} | {_cell(cifs)} | {_cell(verdict)} |\n")
    return "".join(lines)


def write(ktap_text, path):
    """Write the table of a run's KTAP to `path`; whether there was one."""
    text = table(rows(ktap_text))
    if text:
        path.write_text("# Parity: tmpfs and CIFS, change by change\n\n" + text)
    return bool(text)
