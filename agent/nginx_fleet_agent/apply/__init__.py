"""Applying approved changes safely: check, back up, write, test, reload, verify, restore."""
