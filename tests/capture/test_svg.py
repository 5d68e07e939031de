"""The SVG sequence diagram: well-formed, one arrow per message, markers
as notes, the broken scale said, too large refused."""

import xml.etree.ElementTree as ET

import pytest

from test_read import canned
from testbed.capture import svg as capture_svg
from testbed.capture.notify import notify_events, pair_latencies
from testbed.capture.records import Marker, Pdu
from testbed.capture.view import request_finder

SVG = "{http://www.w3.org/2000/svg}"


def scenario_svg():
    capture = canned()
    events = notify_events(capture.pdus, capture.events())
    text = capture_svg.sequence_svg(events, pair_latencies(capture.events()),
                                    "t <&> test", request_finder(capture.pdus))
    return events, ET.fromstring(text.encode())


def groups(root, cls):
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == cls]


def test_svg_is_well_formed_with_one_arrow_per_message():
    events, root = scenario_svg()
    messages = [e for e in events if not isinstance(e, Marker)]
    arrows = groups(root, "message")
    assert len(arrows) == len(messages) == 18
    assert all(len(g.findall(f"{SVG}line")) == 1 for g in arrows)
    assert [int(g.get("data-frame")) for g in arrows] == [m.frame for m in messages]


def test_markers_are_notes_and_latency_is_written():
    _, root = scenario_svg()
    notes = groups(root, "marker")
    assert len(notes) == 5
    texts = ["".join(t.itertext()) for g in notes for t in g.iter(f"{SVG}text")]
    assert any("response #10 -> signal 3.000 ms" in t for t in texts)


def test_title_is_escaped_and_scale_break_is_said():
    _, root = scenario_svg()
    assert root.find(f"{SVG}title").text == "t <&> test"
    legend = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert "100 px =" in legend
    assert "scale broken" in legend          # the scenario's 0.7 s wait is shortened


def test_arrows_go_the_right_way():
    _, root = scenario_svg()
    first = groups(root, "message")[0].find(f"{SVG}line")      # CREATE request
    assert float(first.get("x1")) < float(first.get("x2"))
    reply = groups(root, "message")[2].find(f"{SVG}line")      # its response
    assert float(reply.get("x1")) > float(reply.get("x2"))


def test_rows_never_closer_than_the_minimum_gap():
    events = [Pdu(i, 1.0 + i * 1e-6, 0, "10.0.77.2", "", 0, 15, False, False, i)
              for i in range(50)]
    ys, segments = capture_svg.layout(events, capture_svg.scale_for(
        [e.time for e in events]))
    assert min(b - a for a, b in zip(ys, ys[1:])) >= capture_svg.MESSAGE_GAP


def test_too_many_messages_are_refused():
    events = [Pdu(i, i * 0.01, 0, "10.0.77.2", "", 0, 15, False, False, i)
              for i in range(capture_svg.MAX_MESSAGES + 1)]
    with pytest.raises(capture_svg.PictureTooLarge):
        capture_svg.sequence_svg(events)
