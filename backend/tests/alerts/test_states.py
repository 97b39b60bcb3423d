"""The (rule, host) state machine, step by step, and the rules file round trip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from app.alerts.models import IncidentState, PairState
from app.alerts.rules_file import (
    RulesFileError,
    default_rules,
    dump_rules,
    format_duration,
    parse_duration,
    parse_rules,
)
from app.alerts.signals import SIGNALS
from app.alerts.states import INACTIVE, Pair, Timing, step

T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


Trace = list[tuple[PairState, IncidentState | None, IncidentState | None, bool]]


def run(
    signal: list[bool | None], *, for_s: int, keep_s: int, no_data: str = "ok", every: int = 15
) -> Trace:
    """Feed one verdict per evaluation; return (state, opens, moves_to, closes) per step."""
    pair: Pair = INACTIVE
    trace: Trace = []
    for index, matches in enumerate(signal):
        result = step(
            pair,
            matches=matches,
            no_data=no_data,
            timing=Timing(for_s, keep_s),
            now=at(index * every),
        )
        trace.append((result.pair.state, result.opens, result.moves_to, result.closes))
        pair = result.pair
    return trace


def test_pending_until_for_then_firing_once() -> None:
    trace = run([True, True, True, True, True], for_s=30, keep_s=0)
    states = [t[0] for t in trace]
    assert states == [
        PairState.pending,
        PairState.pending,
        PairState.firing,
        PairState.firing,
        PairState.firing,
    ]
    assert [t[1] for t in trace].count(IncidentState.firing) == 1


def test_for_zero_fires_at_the_first_evaluation() -> None:
    assert run([True], for_s=0, keep_s=0)[0][:2] == (PairState.firing, IncidentState.firing)


def test_a_blip_shorter_than_for_never_fires() -> None:
    trace = run([True, False, True, False, True, False], for_s=30, keep_s=0)
    assert all(t[1] is None for t in trace)
    assert trace[-1][0] is PairState.inactive


def test_flapping_signal_keeps_one_incident_through_keep_firing() -> None:
    """Off for less than keep_firing goes recovering and back to firing: the same incident."""
    trace = run([True, False, True, False, False, True, False], for_s=0, keep_s=60)
    assert [t[1] for t in trace].count(IncidentState.firing) == 1
    assert not any(t[3] for t in trace)
    assert trace[1][0] is PairState.recovering and trace[2][2] is IncidentState.firing


def test_resolves_after_keep_firing() -> None:
    trace = run([True, False, False, False, False, False], for_s=0, keep_s=60)
    closes = [i for i, t in enumerate(trace) if t[3]]
    # Off from t=15 s; keep_firing 60 s elapses at t=75 s, the evaluation at index 5.
    assert closes == [5]
    assert trace[5][0] is PairState.inactive


@pytest.mark.parametrize(
    ("no_data", "expected"),
    [
        ("ok", PairState.recovering),
        ("keep", PairState.firing),
        ("alerting", PairState.firing),
        ("nodata", PairState.nodata),
    ],
)
def test_no_data_choices_while_firing(no_data: str, expected: PairState) -> None:
    trace = run([True, None], for_s=0, keep_s=60, no_data=no_data)
    assert trace[1][0] is expected


def test_nodata_opens_its_own_incident_and_closes_when_data_is_fine() -> None:
    trace = run([None, None, False], for_s=0, keep_s=0, no_data="nodata")
    assert trace[0][:2] == (PairState.nodata, IncidentState.nodata)
    assert trace[1][1] is None
    assert trace[2][0] is PairState.inactive and trace[2][3]


def test_nodata_then_condition_continues_the_incident_as_firing() -> None:
    result = step(
        Pair(PairState.nodata), matches=True, no_data="nodata", timing=Timing(0, 0), now=T0
    )
    assert result.pair.state is PairState.firing
    assert result.opens is None and result.moves_to is IncidentState.firing


def test_durations() -> None:
    assert [parse_duration(v) for v in (90, "90s", "2m", "1h", "1d", " 5 m ")] == [
        90,
        90,
        120,
        3600,
        86400,
        300,
    ]
    for bad in ("2 weeks", "-1m", "1.5h", True):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert [format_duration(s) for s in (0, 90, 120, 3600, 86400)] == [
        "0s",
        "90s",
        "2m",
        "1h",
        "1d",
    ]


def test_default_rules_cover_the_issue_and_round_trip() -> None:
    rules = default_rules()
    assert {r.signal for r in rules} == set(SIGNALS)
    drops = next(r for r in rules if r.key == "dropped-connections")
    assert (drops.op, drops.threshold, drops.severity) == (">", 0, "critical")
    # Every rate-style default needs a request volume and clears below where it fires.
    for rule in rules:
        if SIGNALS[rule.signal].needs_requests:
            assert rule.min_requests and rule.clear_threshold is not None
    assert parse_rules(dump_rules(rules, {}), {}) == rules


BASE = "key: a, name: A, op: '>', threshold: 1, window: 1m, severity: info"


def test_rules_file_errors_name_the_rule_and_field() -> None:
    with pytest.raises(RulesFileError, match=r"rules\[0\].window"):
        parse_rules("rules:\n- key: a\n  window: soon\n", {})
    with pytest.raises(RulesFileError, match=r"rules\[0\]: .*signal"):
        parse_rules(
            "rules:\n- {" + BASE + ", signal: nope}\n",
            {},
        )
    with pytest.raises(RulesFileError, match="no channel named pager"):
        parse_rules(
            "rules:\n- {" + BASE + ", signal: silent_s, channels: [pager]}\n",
            {},
        )
    with pytest.raises(RulesFileError, match="twice"):
        one = "- {" + BASE + ", signal: silent_s}\n"
        parse_rules("rules:\n" + one + one, {})
    with pytest.raises(RulesFileError, match="YAML"):
        parse_rules("rules: [", {})
