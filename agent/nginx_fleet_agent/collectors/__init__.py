"""Collectors: each reads one source and returns its fragment of a sample."""
