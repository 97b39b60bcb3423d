"""Each benchmark script runs end to end on real parts in a tiny configuration."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run bench/NAME with the repository's Python, as `make bench` does."""
    return subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )


def test_agent_cost_measures_the_real_agent_against_real_nginx() -> None:
    done = run_script("agent_cost.py", "--duration", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ms CPU per cycle" in done.stdout
    assert "check: stub_status read in every sample: OK" in done.stdout
    assert "check: seqs consecutive: OK" in done.stdout


def test_ingest_stores_exactly_the_acknowledged_pushes() -> None:
    # Enough hosts that no host's 10 s sample clock runs past the 15 min future bound.
    done = run_script("ingest.py", "--hosts", "50", "--duration", "2", "--connections", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio push/ping:" in done.stdout
    assert "check: OK, every 2xx reply stored exactly once" in done.stdout


def test_ingest_parts_compares_each_part_with_its_former_way() -> None:
    done = run_script("ingest_parts.py", "--quick", "--hosts", "400")
    assert done.returncode == 0, done.stdout + done.stderr
    for part in ("routing", "live events", "host update"):
        assert done.stdout.count(f"{part} ") == 2, done.stdout
    # Refreshed copies make every update change indexed columns: none stays on its page.
    assert re.search(r"before 0014\).*HOT 0%", done.stdout), done.stdout
    assert not re.search(r"once a minute \(now\).*HOT 0%", done.stdout), done.stdout


def test_series_reads_a_full_day_through_the_api() -> None:
    done = run_script("series.py", "--other-hosts", "0", "--fleet-hosts", "10", "--requests", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GET /health (API baseline)" in done.stdout
    assert "rollup SQL alone (floor)" in done.stdout
    assert re.search(r"in one backend process, medians: floor \d+\.\d+ ms; rows", done.stdout)
    assert "target the series' own SQL < 1.5x floor:" in done.stdout
    assert "host has 8640 rows: OK" in done.stdout


def test_storage_measures_bytes_per_row_and_projects_the_fleet() -> None:
    done = run_script("storage.py", "--rows", "200")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"samples \(raw, 10 s\)\s+\d+\.\d", done.stdout), done.stdout
    assert "projected: samples and their rollups" in done.stdout


def test_retention_times_a_partition_drop_against_a_delete() -> None:
    done = run_script("retention.py", "--hosts", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio DELETE/all three steps:" in done.stdout
    assert "both emptied: OK" in done.stdout


def test_login_storm_times_the_agent_before_and_during_the_storm() -> None:
    done = run_script("login_storm.py", "--requests", "5", "--concurrency", "8")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio ping storm/baseline:" in done.stdout
    assert '"401"' in done.stdout


def test_agent_apply_verifies_every_change_on_real_nginx() -> None:
    done = run_script("agent_apply.py", "--quick", "--verify-s", "0.5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "received → verified: median" in done.stdout
    assert "correctness: OK" in done.stdout


def test_apply_loop_times_approval_to_verified_with_and_without_the_hint() -> None:
    # A 4 s interval and a 1 s watch keep it short; the README's figures use the defaults.
    done = run_script("apply_loop.py", "--quick", "--push-interval", "4", "--verify-s", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "correctness: OK" in done.stdout
    for mode in ("hint    ", "no hint "):
        for flow in ("fix: previewed, then approve and apply", "rollback: one click"):
            assert f"{mode} {flow}" in done.stdout, done.stdout
    assert "ratio no hint / hint, fix, approval → verified: median" in done.stdout
    assert "target approval → verified < 10 s (hint, fix: previewed" in done.stdout
    # With the hint the agent asks every 2 s once the preview is known, not every 4 s.
    row = next(line for line in done.stdout.splitlines() if line.startswith("hint     fix:"))
    _median, worst = (float(v) for v in re.findall(r"(-?[\d.]+) s", row)[:2])
    assert worst < 2.9, row


def test_access_log_parses_every_line_of_the_demo_format_once() -> None:
    done = run_script("access_log.py", "--lines", "20000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "format cache (demo-cache)" in done.stdout
    assert re.search(r"agent: tail \+ parse \+ aggregate +[\d.]+ +[\d,]+", done.stdout)
    assert "check: every line parsed and counted once: OK" in done.stdout


def test_alert_evaluation_opens_one_incident_per_dropping_host() -> None:
    done = run_script("alerts_eval.py", "--hosts", "200", "--cycles", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "floor: read every host's latest sample" in done.stdout
    assert "check: 2 incidents for 2 dropping hosts, one grouped delivery: OK" in done.stdout


def test_fleet_scale_stores_every_acknowledged_push_of_a_paced_fleet(tmp_path: Path) -> None:
    # 60 hosts at 2 s: 30 pushes/s on the production stack, the browser's reads and streams.
    done = run_script(
        "fleet_scale.py", "--hosts", "60", "--duration", "8", "--interval", "2",
        "--jitter", "0.2", "--connections", "4", "--analysis-wait", "20",
        "--json", str(tmp_path / "fleet.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check stored = acknowledged: OK" in done.stdout
    assert re.search(r"GET fleet \(all\) +n=\d+", done.stdout), done.stdout
    assert re.search(r"GET health +n=\d+", done.stdout), done.stdout
    assert "live stream GET /api/v1/events:" in done.stdout
    assert (tmp_path / "fleet.json").is_file()


def test_analysis_queue_drains_a_config_change_deduplicated_while_probes_pass() -> None:
    done = run_script("analysis_queue.py", "--hosts", "40", "--spread-s", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio backlog/floor, median:" in done.stdout
    assert "check: every host's latest analysis is of the config it runs: OK" in done.stdout
    # Whether 40 hosts build a backlog to deduplicate depends on the machine's speed (the dedup
    # itself is tested with a real worker in backend/tests/worker/test_analysis_dedup.py).
    assert re.search(r"check: .*analyses than snapshots .*: OK", done.stdout), done.stdout


def test_reanalysis_round_times_steady_hosts_marked_current_against_the_full_path() -> None:
    done = run_script("reanalysis_round.py", "--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    for path in ("full path (baseline)", "marked current"):
        assert re.search(rf"  {re.escape(path)} +[\d.]+ ms +[\d.]+ ms", done.stdout), done.stdout
    assert "ratio full/current: worker CPU" in done.stdout
    assert "check: both paths store the same scores: OK" in done.stdout


def test_live_events_coalesces_pushes_for_the_fleet_and_scopes_a_host_page() -> None:
    done = run_script(
        "live_events.py", "--rate", "200", "--duration", "3", "--hosts", "1000",
        "--fleet-clients", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Redis pub/sub alone (floor)" in done.stdout
    assert "push → delta naming its host: median" in done.stdout
    assert "check: every push named by a delta" in done.stdout and done.stdout.endswith("OK\n")


def test_fleet_api_times_sorted_filtered_pages_against_health() -> None:
    done = run_script("fleet_api.py", "--hosts", "300", "--requests", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"GET /health \(floor\) +n=3", done.stdout), done.stdout
    assert re.search(r"fleet by score asc +n=3 .* p95/health", done.stdout), done.stdout
    assert "top findings" in done.stdout
    assert "check: replies sorted, filtered and counted: OK" in done.stdout


def test_storage_projects_packed_access_log_figures_per_busy_site() -> None:
    done = run_script("storage.py", "--rows", "200")
    assert done.returncode == 0, done.stdout + done.stderr
    ratios = re.findall(r"packed / JSON (\d+\.\d+)x", done.stdout)
    # Six access-log tables, each smaller packed than with JSON sketches.
    assert len(ratios) == 6 and all(float(r) < 1 for r in ratios), done.stdout
    per_site = re.search(r"per busy site of a host: (\d+\.\d) MB", done.stdout)
    assert per_site is not None, done.stdout
    one = re.search(r"with 1 busy site\(s\) each: (\d+\.\d) GB", done.stdout)
    five = re.search(r"with 5 busy site\(s\) each: (\d+\.\d) GB", done.stdout)
    assert one and five and float(five[1]) == pytest.approx(5 * float(one[1]), rel=0.01)


def test_log_migration_times_0013_against_a_sql_rewrite() -> None:
    done = run_script("log_migration.py", "--quick")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio upgrade/floor:" in done.stdout
    assert "sketches decode to the JSON they were: OK" in done.stdout
