"""The fleet figures as Prometheus metric families, rendered in the text format.

A fresh registry per scrape: nothing is kept between scrapes, and nothing of the process-wide
default registry (the Python process's own metrics) is exposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.exposition.service import SEVERITIES, FleetFigures, HostFigures

PREFIX = "nginx_fleet"
HOST_LABELS = ["host", "host_id"]
# Newest-sample figure -> (metric name, help).
SAMPLE_METRICS = {
    "active": ("connections_active", "Active client connections (stub_status)"),
    "reading": ("connections_reading", "Connections reading the request header"),
    "writing": ("connections_writing", "Connections writing the response"),
    "waiting": ("connections_waiting", "Idle keepalive connections"),
    "req_per_s": ("requests_per_second", "Requests per second over the newest sample"),
    "accepts_per_s": ("accepts_per_second", "Accepted connections per second, newest sample"),
    "drops_per_s": ("drops_per_second", "Dropped connections (accepts - handled) per second"),
    "fds_open": ("fds_open", "File descriptors open by the nginx workers"),
    "fds_limit": ("fds_limit", "File descriptor limit of the nginx workers"),
}
_INVALID_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_]")


def host_label_name(key: str) -> str:
    """A host label's key as a Prometheus label name: label_<key>, other characters as _."""
    return "label_" + _INVALID_LABEL_CHARS.sub("_", key)


def _host_values(host: HostFigures) -> list[str]:
    return [host.hostname, str(host.host_id)]


def _labels_metric(hosts: list[HostFigures]) -> Metric:
    """nginx_fleet_host_labels: 1 per host, its labels as label_<key> (to join on host_id)."""
    metric = Metric(f"{PREFIX}_host_labels", "The host's labels as label_<key>", "gauge")
    for host in hosts:
        labels = {"host": host.hostname, "host_id": str(host.host_id)}
        for key, value in sorted(host.labels.items()):
            # Keys differing only in characters Prometheus cannot hold: the first one wins.
            labels.setdefault(host_label_name(key), value)
        metric.add_sample(f"{PREFIX}_host_labels", labels, 1.0)
    return metric


class FleetCollector(Collector):
    """Yields the metric families of one FleetFigures."""

    def __init__(self, figures: FleetFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        """Per-host gauges, then the fleet's totals and firing alerts."""
        hosts = self.figures.hosts
        up = GaugeMetricFamily(
            f"{PREFIX}_host_up",
            "1 when the host pushes and nginx runs, else 0 (silent, never pushed, or nginx down)",
            labels=HOST_LABELS,
        )
        age = GaugeMetricFamily(
            f"{PREFIX}_host_last_seen_age_seconds",
            "Seconds since the host's newest push",
            labels=HOST_LABELS,
        )
        figures = {
            name: GaugeMetricFamily(f"{PREFIX}_host_{metric}", doc, labels=HOST_LABELS)
            for name, (metric, doc) in SAMPLE_METRICS.items()
        }
        for host in hosts:
            values = _host_values(host)
            up.add_metric(values, 1.0 if host.status == "up" else 0.0)
            if host.last_seen_age_s is not None:
                age.add_metric(values, host.last_seen_age_s)
            for name, value in host.sample.items():
                figures[name].add_metric(values, value)
        yield up
        yield age
        yield from figures.values()
        yield _labels_metric(hosts)
        yield GaugeMetricFamily(f"{PREFIX}_hosts", "Enrolled hosts", value=len(hosts))
        yield GaugeMetricFamily(
            f"{PREFIX}_hosts_up",
            "Hosts pushing with nginx running",
            value=sum(host.status == "up" for host in hosts),
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_hosts_silent",
            "Hosts without a push for 3 intervals, or never",
            value=sum(host.status in ("stale", "new") for host in hosts),
        )
        firing = self.figures.firing_by_severity
        if firing is not None:
            alerts = GaugeMetricFamily(
                f"{PREFIX}_alerts_firing", "Firing alerts by severity", labels=["severity"]
            )
            for severity in (*SEVERITIES, *sorted(firing.keys() - set(SEVERITIES))):
                alerts.add_metric([severity], firing.get(severity, 0))
            yield alerts


def render(figures: FleetFigures) -> bytes:
    """The figures in the Prometheus text format (0.0.4)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(figures))
    return generate_latest(registry)
