"""Every C program in client-tests/ is either a kselftest harness test or
a helper the Makefile names: anything else would be run as a test."""
import re
from pathlib import Path

CLIENT_TESTS = Path(__file__).resolve().parent.parent / "client-tests"


def helpers():
    text = (CLIENT_TESTS / "Makefile").read_text().replace("\\\n", " ")
    line = re.search(r"^HELPERS := (.*)$", text, re.M).group(1)
    return set(line.split())


def test_each_program_is_a_test_or_a_helper():
    named = helpers()
    for source in sorted(CLIENT_TESTS.glob("*.c")):
        is_test = "TEST_HARNESS_MAIN" in source.read_text()
        assert is_test != (source.stem in named), (
            f"{source.name}: " + ("a helper listed as a test"
                                  if is_test else
                                  "not a harness test and not in HELPERS"))
