"""Prometheus exposition: GET /metrics with the fleet's figures, behind a bearer token."""
