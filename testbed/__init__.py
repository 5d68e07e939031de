"""The two-VM CIFS change-notification testbed behind orchestrate.py."""
