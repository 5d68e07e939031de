"""JUnit XML from the suite's KTAP document, for CI systems and dashboards
that read JUnit rather than KTAP: one <testsuite> per top-level test
(program or check), one <testcase> per case nested under it."""

import re
import xml.etree.ElementTree as ET

from . import ktap


def _split_top(text):
    """[(Result, nested lines)] of a KTAP document's top-level tests: the
    lines indented deeper than the top level, between two top-level
    results, belong to the second one."""
    plan, results = ktap.parse(text)
    if not results:
        return []
    top = results[0].indent
    out, pending, i = [], [], 0
    for line in text.splitlines():
        m = ktap.RESULT.match(line)
        if m and len(m.group(1).expandtabs()) == top and i < len(results):
            out.append((results[i], pending))
            pending, i = [], i + 1
        elif len(line.expandtabs()) - len(line.expandtabs().lstrip()) > top:
            pending.append(line)
    return out


def _case(parent, classname, name, passed, skipped, reason, output):
    case = ET.SubElement(parent, "testcase", classname=classname, name=name)
    if skipped:
        ET.SubElement(case, "skipped", message=reason or "skipped")
    elif not passed:
        fail = ET.SubElement(case, "failure", message=reason or "failed")
        fail.text = output
    return case


def _failed_without_case(result, cases):
    return (not result.passed and not result.skipped
            and all(c.passed or c.skipped for _, c, _ in cases))


def _cases(result, body, classname):
    """[(classname, Result, output)] of the innermost cases under one test:
    a program's cases, KUnit's cases under their suites; a test with
    nothing nested is its own case. A test that failed without a failing
    case (a crash, a short plan) adds a failed case named "program"."""
    children = _split_top(body)
    if not children:
        return [(classname, result, body)]
    cases = []
    for child, nested in children:
        inner = "\n".join(nested)
        if _split_top(inner):
            cases += _cases(child, inner, f"{classname}.{child.name}")
        else:
            cases.append((classname, child, body))
    if _failed_without_case(result, cases):
        cases.append((classname, ktap.Result(False, 0, "program", "",
                                             result.reason or "failed"), body))
    return cases


def _seconds(name, body):
    """The duration the suite notes after a top-level test's output
    ("# NAME: 12.3s"), as a str, or None."""
    m = re.search(rf"^\s*# {re.escape(name)}: ([0-9.]+)s$", body, re.M)
    return m.group(1) if m else None


def from_ktap(text, suite_name="cifs-notify-testbed", seconds=None):
    """The JUnit XML (a str) of a KTAP document as the suite writes it."""
    root = ET.Element("testsuites", name=suite_name)
    totals = [0, 0, 0]     # skipped, failed, passed
    for top, nested in _split_top(text):
        body = "\n".join(nested)
        suite = ET.SubElement(root, "testsuite", name=top.name)
        counts = [0, 0, 0]
        found = _cases(top, body, top.name)
        secs = _seconds(top.name, body)
        for classname, case, output in found:
            tc = _case(suite, classname, case.name, case.passed, case.skipped,
                       case.reason, output)
            if secs is not None and len(found) == 1:
                tc.set("time", secs)
            counts[0 if case.skipped else (1 if not case.passed else 2)] += 1
        suite.set("tests", str(sum(counts)))
        suite.set("failures", str(counts[1]))
        suite.set("skipped", str(counts[0]))
        if secs is not None:
            suite.set("time", secs)
        out = ET.SubElement(suite, "system-out")
        out.text = body
        for i in range(3):
            totals[i] += counts[i]
    root.set("tests", str(sum(totals)))
    root.set("failures", str(totals[1]))
    root.set("skipped", str(totals[0]))
    if seconds is not None:
        root.set("time", f"{seconds:.1f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
