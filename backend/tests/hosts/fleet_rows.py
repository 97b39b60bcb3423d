"""A large fleet written by the database itself (generate_series), for query plan tests."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

# Every host has labels env (4 values), dc (10) and rack (100), figures (a tenth unknown), three
# analyses (the newest is the latest) with five findings each, and recent access-log figures.
FLEET_SQL = (
    """
INSERT INTO hosts (agent_id, hostname, labels, token_hash, enrolled_at, last_seen_at, nginx_up,
                   stub_status_available, req_per_s, active, reading, writing, waiting,
                   drops_per_s, cpu_pct, mem_used_pct, fds_open, fds_limit, fds_used_pct)
SELECT 'agent-' || i, 'host-' || lpad(i::text, 6, '0'),
       jsonb_build_object('env', 'env' || i % 4, 'dc', 'dc' || i % 10, 'rack', 'r' || i % 100),
       md5(i::text) || md5('t' || i), now() - interval '1 day',
       CASE WHEN i % 50 = 0 THEN NULL ELSE now() - (i % 40) * interval '1 second' END,
       i % 30 <> 0, true,
       CASE WHEN i % 10 = 0 THEN NULL ELSE (i * 7919) % 1000 END, (i * 31) % 500, 0, 1,
       (i * 31) % 499, CASE WHEN i % 97 = 0 THEN 1.0 ELSE 0.0 END, (i * 13) % 100,
       (i * 17) % 100, (i * 3) % 1024, 1024, ((i * 3) % 1024) / 10.24
FROM generate_series(1, :hosts) AS i
""",
    # The copies the fleet page sorts by, as pushes and the periodic refresh leave them.
    """
UPDATE hosts SET
    sort_last_seen_at = last_seen_at, sort_req_per_s = req_per_s, sort_active = active,
    sort_waiting = waiting, sort_drops_per_s = drops_per_s, sort_cpu_pct = cpu_pct,
    sort_mem_used_pct = mem_used_pct, sort_fds_used_pct = fds_used_pct, sorted_at = last_seen_at
""",
    """
INSERT INTO config_snapshots (host_id, hash, dump, received_at, parse_status)
SELECT h.id, md5(h.id || '-' || n), 'events {}', now(), 'parsed'
FROM hosts AS h, generate_series(1, 3) AS n
""",
    """
INSERT INTO config_analyses (host_id, snapshot_id, analyzed_at, status, score, category_scores,
                             error_count, warning_count, info_count, inputs_digest, inputs)
SELECT s.host_id, s.id, now(), 'ok', 50 + s.id % 50, '{}', s.id % 3, s.id % 5, 1, '', '{}'
FROM config_snapshots AS s ORDER BY s.id
""",
    """
INSERT INTO findings (analysis_id, host_id, key, place, directive, rule, severity, category,
                      file, line, message, evidence, doc_url)
SELECT a.id, a.host_id, 'R-' || n || '@/etc/nginx/nginx.conf:http', 'http', 'x', 'R-' || n,
       (ARRAY['error', 'warning', 'info'])[1 + n % 3], 'workers', '/etc/nginx/nginx.conf', n,
       'finding ' || n, '{}', ''
FROM config_analyses AS a, generate_series(1, 5) AS n
WHERE (a.host_id + n) % 7 <> 0
""",
    """
INSERT INTO host_facts (host_id, facts, nginx_version, updated_at)
SELECT id, '{}', '1.22.1', now() FROM hosts
""",
    """
INSERT INTO access_log_recent (host_id, computed_at, requests, cache_hit_ratio,
                               request_time_p95_s, share_5xx)
SELECT id, now(), 1000, (id % 100) / 100.0, (id % 37) / 10.0, (id % 11) / 100.0 FROM hosts
""",
)


def insert_fleet(session: Session, *, hosts: int) -> None:
    """Insert `hosts` hosts with their figures, analyses and findings, and commit."""
    for statement in FLEET_SQL:
        session.execute(text(statement), {"hosts": hosts})
    session.commit()
