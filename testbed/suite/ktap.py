"""KTAP/TAP results: parse what the tests print, count, and re-emit them as
one top-level KTAP document for the whole suite."""

import re

RESULT = re.compile(r"^(\s*)(ok|not ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*"
                    r"(?:#\s*(\w+)\b\s*(.*))?$")
PLAN = re.compile(r"^(\s*)1\.\.(\d+)")


class Result:
    """One test result line at some nesting depth."""

    def __init__(self, ok, number, name, directive="", reason="", indent=0):
        self.ok, self.number, self.name = ok, number, name
        self.directive, self.reason, self.indent = directive.upper(), reason, indent

    @property
    def skipped(self):
        return self.directive == "SKIP"

    @property
    def passed(self):
        return self.ok or self.directive == "XFAIL"

    def __repr__(self):
        return (f"Result({self.ok}, {self.number}, {self.name!r}, "
                f"{self.directive!r}, indent={self.indent})")


def parse(text):
    """(plan or None, [Result]) of the outermost level of a KTAP document.

    The outermost level is the shallowest indentation at which a plan or a
    result appears; nested subtests (indented) are left to their parent's
    line, as KTAP intends.
    """
    lines = text.splitlines()
    depths = []
    for line in lines:
        m = RESULT.match(line) or PLAN.match(line)
        if m:
            depths.append(len(m.group(1).expandtabs()))
    if not depths:
        return None, []
    top = min(depths)
    plan, results = None, []
    for line in lines:
        m = PLAN.match(line)
        if m and len(m.group(1).expandtabs()) == top and plan is None:
            plan = int(m.group(2))
            continue
        m = RESULT.match(line)
        if m and len(m.group(1).expandtabs()) == top:
            results.append(Result(m.group(2) == "ok", int(m.group(3)),
                                  m.group(4).strip(), m.group(5) or "",
                                  (m.group(6) or "").strip(), top))
    return plan, results


CONSOLE_PREFIX = re.compile(r"^\r?\[\s*\d+\.\d+\] ?")


def kunit_from_console(text):
    """The KTAP document KUnit printed on a kernel console at boot (the
    printk timestamps removed), or None when there is none."""
    lines = []
    started = False
    for raw in text.splitlines():
        m = CONSOLE_PREFIX.match(raw)
        if not m:
            continue
        line = raw[m.end():]
        if not started:
            if line.strip() == "KTAP version 1":
                started = True
                lines.append(line)
            continue
        lines.append(line)
        plan, results = parse("\n".join(lines))
        if plan is not None and len(results) >= plan:
            break
    return "\n".join(lines) + "\n" if started else None


def subtest_counts(text):
    """(passed, failed, skipped) of the cases one level below the top of a
    KTAP document (KUnit's test cases, under their suites)."""
    passed = failed = skipped = 0
    for line in text.splitlines():
        m = RESULT.match(line)
        if not m or not m.group(1):
            continue
        r = Result(m.group(2) == "ok", int(m.group(3)), m.group(4),
                   m.group(5) or "")
        if r.skipped:
            skipped += 1
        elif r.passed:
            passed += 1
        else:
            failed += 1
    return passed, failed, skipped


def verdict(plan, results, exit_code=0):
    """(passed?, why) for one test program's output and exit status."""
    if not results:
        return False, f"no results (exit {exit_code})"
    failed = [r for r in results if not r.passed and not r.skipped]
    if failed:
        return False, f"{len(failed)} of {len(results)} failed: " + \
            ", ".join(r.name for r in failed[:5])
    if plan is not None and plan != len(results):
        return False, f"planned {plan}, ran {len(results)}"
    if exit_code not in (0, 4):    # 4: kselftest KSFT_SKIP
        return False, f"exit status {exit_code}"
    return True, ""


def indent(text, prefix="    "):
    return "\n".join(prefix + line if line else line
                     for line in text.splitlines())


def case_counts(results, ok):
    """(passed, failed, skipped) of one program's cases; a program that
    failed without failing a case (crash, short plan) counts one failure."""
    passed = sum(1 for r in results if r.passed and not r.skipped)
    skipped = sum(1 for r in results if r.skipped)
    failed = len(results) - passed - skipped
    if not ok and failed == 0:
        failed = 1
    return passed, failed, skipped


class Report:
    """The suite's KTAP document: one top-level test per program or check,
    each with its own output nested under it (indented, as KTAP subtests
    are). The closing line counts cases, not programs."""

    def __init__(self):
        self.totals = [0, 0, 0]

    def add(self, counts):
        for i, n in enumerate(counts):
            self.totals[i] += n

    def counts(self):
        return tuple(self.totals)

    @staticmethod
    def header(total):
        return f"KTAP version 1\n1..{total}"

    @staticmethod
    def line(number, name, ok, output="", skip_reason=None):
        """A top-level result line, the program's own KTAP nested above it."""
        text = indent(output.rstrip()) + "\n" if output.strip() else ""
        if skip_reason is not None:
            return f"{text}ok {number} {name} # SKIP {skip_reason}"
        return f"{text}{'ok' if ok else 'not ok'} {number} {name}"

    def closing(self):
        passed, failed, skipped = self.totals
        tail = f", {skipped} skipped" if skipped else ""
        return f"{passed} passed, {failed} failed{tail}"
