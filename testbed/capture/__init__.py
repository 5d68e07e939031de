"""Reading what the testbed captured (`orchestrate.py pcap`, and the suite's
per-test slices).

How the pieces fit, from the pcap to what a person reads:

- read: one tshark pass (-T fields) over the client's capture, parsed into
  records; markers alone in a quicker pass (read_markers).
- align: gives each SMB2 PDU of a multi-PDU frame its own field values
  (tshark lists a frame's occurrences, not which PDU they belong to).
- smb2: the protocol's names and numbers (commands, statuses, filters).
- records: Pdu, Marker (the guests' TBMARK datagrams) and Capture.
- notify: the notify view: watched handles, their requests and responses,
  and the latencies from a change marker to the response and the signal.
- view: one line per PDU or marker, the timeline's text.
- slices: the capture cut into one pcap per test, at its markers.
- svg: a notify conversation as a sequence diagram.
- command: `orchestrate.py pcap`, which puts them together.

Imports testbed.common only."""
