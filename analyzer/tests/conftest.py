"""Fixtures of the engine's tests: the engine is pure, so these tests need no services."""
