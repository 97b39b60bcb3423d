"""The wrk Lua script against the loopback sink: rotation, seq order and its own counting."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from harness.net import free_port
from harness.samples import lua_push_template
from harness.sink import SINK_HOST_TOKEN, running_sink
from harness.wrk_load import HostCredentials, run_agent_load, write_hosts_file


def _hosts(count: int) -> list[HostCredentials]:
    return [
        HostCredentials(i, f"agent-{i}", f"web-{i}", SINK_HOST_TOKEN, first_seq=2)
        for i in range(count)
    ]


def test_push_rotates_hosts_and_numbers_each_host_in_order(tmp_path: Path) -> None:
    hosts_file, template_file = tmp_path / "hosts.tsv", tmp_path / "body.json"
    write_hosts_file(hosts_file, _hosts(5))
    template_file.write_text(lua_push_template())
    port = free_port()
    with running_sink(port, push_interval_s=10) as sink:
        result = run_agent_load(
            mode="push",
            base_url=f"http://127.0.0.1:{port}",
            hosts_file=hosts_file,
            template_file=template_file,
            results_file=tmp_path / "out.json",
            base_epoch=1_700_000_000,
            duration_s=1,
            connections=2,
            threads=2,
        )
        pushes = list(sink.pushes)
    assert result.ok > 10
    assert result.ok == result.accepted
    assert result.ok <= len(pushes) <= result.ok + result.in_flight_at_end
    assert result.duplicates == 0
    seqs: dict[str, list[int]] = defaultdict(list)
    for push in pushes:
        (sample,) = push["samples"]
        seqs[push["agent_id"]].append(sample["seq"])
        assert sample["stub_status"]["requests"] == sample["seq"] * 4100
    assert set(seqs) == {f"agent-{i}" for i in range(5)}
    for numbers in seqs.values():
        # Requests overlap on two connections, so arrival order may swap neighbours only.
        assert sorted(numbers) == list(range(2, 2 + len(numbers)))


def test_ping_counts_every_reply(tmp_path: Path) -> None:
    hosts_file, template_file = tmp_path / "hosts.tsv", tmp_path / "body.json"
    write_hosts_file(hosts_file, _hosts(3))
    template_file.write_text(json.dumps({}))
    port = free_port()
    with running_sink(port, push_interval_s=10) as sink:
        result = run_agent_load(
            mode="ping",
            base_url=f"http://127.0.0.1:{port}",
            hosts_file=hosts_file,
            template_file=template_file,
            results_file=tmp_path / "out.json",
            base_epoch=1_700_000_000,
            duration_s=1,
            connections=1,
        )
        pings = sink.pings
    assert result.ok > 10
    assert result.statuses == {"200": result.ok}
    # Requests cut off at wrk's deadline may or may not have reached the sink.
    assert result.ok <= pings <= result.ok + result.in_flight_at_end
    assert not sink.pushes
