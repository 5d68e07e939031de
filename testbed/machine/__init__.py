"""The two guests and what they stand on: the Debian images (images.py),
QEMU and the guest agents (vm.py, guest_agent.py), the private segment
(network.py), saved guests (snapshot.py), the programs started on the
server (server_programs.py), and the commands that bring it all up and
down (lifecycle.py: up, down, status) or let a person in
(console_attach.py: shell). Imports testbed.common, capture and kernel."""
