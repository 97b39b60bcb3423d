"""Default settings of the agent, in one place."""

from pathlib import Path

CONFIG_PATH = Path("/etc/nginx-fleet-agent/agent.toml")
ENV_PREFIX = "NGINX_FLEET_AGENT_"

STATE_DIR = Path("/var/lib/nginx-fleet-agent")
STATE_FILE_NAME = "state.json"
SPOOL_FILE_NAME = "spool.sqlite3"

PUSH_INTERVAL_S = 10.0
MIN_PUSH_INTERVAL_S = 1.0
REQUEST_TIMEOUT_S = 10.0
MAX_SAMPLES_PER_PUSH = 500
# Gap records (seq ranges the spool dropped) sent with one push; the server takes 100.
MAX_GAPS_PER_PUSH = 100
# Refused samples logged one by one per push; the rest are summed up in one line.
MAX_LOGGED_REFUSALS = 10

# One day of samples at the default interval; a sample is about 1.5 KB of JSON.
SPOOL_MAX_SAMPLES = 8640
SPOOL_MAX_BYTES = 64 * 1024 * 1024

NGINX_BINARY = "/usr/sbin/nginx"
NGINX_COMMAND_TIMEOUT_S = 20.0
# `nginx -T` is re-run when a dumped file or its directory changes (cheap stat calls); this is
# the safety net for changes stat cannot see (e.g. an include glob matching a new directory).
CONFIG_RESCAN_CYCLES = 30

STUB_STATUS_TIMEOUT_S = 2.0

# Access logs: tailed unless turned off; top paths are off by default (paths may be sensitive).
ACCESS_LOGS = True
ACCESS_LOG_TOP_PATHS = 0
# Seconds a renamed log is still read after it stopped growing: nginx writes to it until it
# reopens its logs (USR1 from logrotate's postrotate).
ACCESS_LOG_ROTATE_WAIT_S = 5.0
ACCESS_LOG_POSITIONS_KEY = "access_log_positions"

# Error logs: counted per interval (lines by level, a few known messages), never sent as text.
ERROR_LOGS = True
ERROR_LOG_POSITIONS_KEY = "error_log_positions"
# Bytes read from one error log per interval; a backlog beyond it is counted in later ones.
ERROR_LOG_MAX_READ_BYTES = 4 << 20

# TLS certificates named by ssl_certificate, sent with the facts: re-read on a config change and
# this often (certificates are renewed without one), at most this many, none larger than this.
TLS_CERTIFICATES = True
TLS_CERTIFICATES_REFRESH_S = 3600.0
TLS_CERTIFICATES_MAX = 500
TLS_CERTIFICATE_MAX_BYTES = 1 << 20
# DNS names kept per certificate (a shared certificate can carry hundreds).
TLS_CERTIFICATE_MAX_NAMES = 100

BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 300.0

LOG_LEVEL = "INFO"

# Applying approved changes: how long the agent watches nginx after a reload (new workers,
# stub_status, the error log) before it calls the change verified.
APPLY_VERIFY_S = 3.0
# `nginx -t` of a changed config; a hung test fails the apply (and restores the files).
APPLY_TEST_TIMEOUT_S = 30.0
APPLY_DIR_NAME = "apply"
# Step reports sent with one push; the server takes 200.
MAX_ACTION_REPORTS_PER_PUSH = 200
