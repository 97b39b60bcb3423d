"""Acknowledgements (mutes) of findings and the fleet-wide view of findings."""
