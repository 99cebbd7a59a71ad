"""Reading a server's /metrics over HTTP, and capturing its log lines."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from tests.support.harness import Harness

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(harness: Harness) -> Samples:
    """Every sample the server's /metrics shows, by name and labels."""
    assert harness.server is not None and harness.server.metrics_port is not None
    url = f"http://127.0.0.1:{harness.server.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    """The sample's value; None when the server does not show it."""
    return samples.get((name, frozenset(labels.items())))


def names(samples: Samples) -> set[str]:
    return {name for name, _ in samples}
