"""Shared building blocks of the nginx-fleet benchmarks (processes, databases, load, figures)."""
