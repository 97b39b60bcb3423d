#!/usr/bin/env bash
# The system side of a fresh Debian machine, shared by `make demo`, `make test` and .ci/run:
#
#   scripts/system-deps.sh [--dry-run] packages PACKAGE...
#       install those of the Debian packages whose command is missing (as root, or through
#       passwordless sudo); otherwise stop at once, printing the one command to run.
#   scripts/system-deps.sh [--dry-run] services
#       make the PostgreSQL and Redis named by TEST_DATABASE_URL and TEST_REDIS_URL reachable:
#       when they are on this machine, install the servers if missing and start them if down.
#
# --dry-run prints what would be installed or started and changes nothing. Commands are looked
# up in SYSTEM_DEPS_PATH (default: PATH plus the sbin directories, where Debian puts nginx).
set -euo pipefail

script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
search_path="${SYSTEM_DEPS_PATH:-$PATH:/usr/local/sbin:/usr/sbin:/sbin}"
dry_run=false

# What each package provides: a package counts as installed when its command is found, or, for
# a value that is an absolute path (nginx's dynamic modules, data files), when that file exists.
modules=/usr/lib/nginx/modules
declare -A provides=(
  [nginx]=nginx
  [libnginx-mod-stream]=$modules/ngx_stream_module.so
  [libnginx-mod-mail]=$modules/ngx_mail_module.so
  [libnginx-mod-http-geoip]=$modules/ngx_http_geoip_module.so
  [libnginx-mod-http-image-filter]=$modules/ngx_http_image_filter_module.so
  [libnginx-mod-http-xslt-filter]=$modules/ngx_http_xslt_filter_module.so
  [libnginx-mod-http-headers-more-filter]=$modules/ngx_http_headers_more_filter_module.so
  [libnginx-mod-http-ndk]=$modules/ndk_http_module.so
  [libnginx-mod-http-lua]=$modules/ngx_http_lua_module.so
  [libnginx-mod-http-echo]=$modules/ngx_http_echo_module.so
  [libnginx-mod-rtmp]=$modules/ngx_rtmp_module.so
  [geoip-database]=/usr/share/GeoIP/GeoIP.dat
  [chromium]=chromium
  [chromium-driver]=chromedriver
  [wrk]=wrk
  [postgresql-client]=psql
  [postgresql]=pg_ctlcluster
  [redis-server]=redis-server
  [redis-tools]=redis-cli
  [docker.io]=dockerd
  [debootstrap]=debootstrap
)

say() { printf 'system-deps: %s\n' "$*" >&2; }

has_command() { PATH="$search_path" command -v "$1" >/dev/null 2>&1; }

is_provided() {
  case "$1" in
    /*) [ -e "$1" ] ;;
    *) has_command "$1" ;;
  esac
}

# How to run a command as root here: directly, through passwordless sudo, or not at all.
root_runner() {
  if [ "$(id -u)" -eq 0 ]; then
    echo direct
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo sudo
  else
    echo none
  fi
}

as_root() {
  case "$(root_runner)" in
    direct) "$@" ;;
    sudo) sudo -n "$@" ;;
    *) return 1 ;;
  esac
}

install_packages() {
  local package missing=()
  for package in "$@"; do
    if [ -z "${provides[$package]:-}" ]; then
      say "unknown package '$package' (known: ${!provides[*]})"
      exit 2
    fi
    is_provided "${provides[$package]}" || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  say "missing: ${missing[*]}"
  if $dry_run; then
    echo "would install: ${missing[*]}"
    return 0
  fi
  if [ "$(root_runner)" = none ]; then
    say "installing them needs root; run this once, then the same make command again:"
    echo "sudo $script packages ${missing[*]}" >&2
    exit 1
  fi
  if ! has_command apt-get; then
    say "no apt-get here: install the Debian packages ${missing[*]} (or their equivalents) by hand"
    exit 1
  fi
  # Keep package scripts from starting services (a system nginx on port 80, a second
  # PostgreSQL): the tests and the demo start what they need themselves, on loopback.
  local policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod +x "$policy"
    trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  say "installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# host and port of a URL such as postgresql+psycopg://user@127.0.0.1:5432/test
url_host() { local rest="${1#*://}"; rest="${rest%%/*}"; rest="${rest##*@}"; echo "${rest%:*}"; }
url_port() {
  local rest="${1#*://}"; rest="${rest%%/*}"; rest="${rest##*@}"
  if [[ "$rest" == *:* ]]; then echo "${rest##*:}"; else echo "$2"; fi
}
is_local() { case "$1" in 127.0.0.1 | localhost | '[::1]' | '') return 0 ;; *) return 1 ;; esac; }

wait_for() {
  local _
  for _ in $(seq 30); do "$@" && return 0; sleep 1; done
  return 1
}

ensure_postgresql() {
  local url="${TEST_DATABASE_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test}"
  local host port
  host="$(url_host "$url")"
  port="$(url_port "$url" 5432)"
  if ! is_local "$host"; then
    say "PostgreSQL at $host:$port is not on this machine: not starting it"
    return 0
  fi
  install_packages postgresql-client postgresql
  if has_command pg_isready && PATH="$search_path" pg_isready -q -h "$host" -p "$port"; then
    return 0
  fi
  # The cluster configured for that port (Debian's pg_lsclusters: version, name, port, ...).
  local cluster
  cluster="$(PATH="$search_path" pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p { print $1 " " $2; exit }')"
  if [ -z "$cluster" ]; then
    if $dry_run; then
      echo "would start: a PostgreSQL cluster on port $port"
      return 0
    fi
    say "no PostgreSQL cluster listens on port $port; create one with:"
    echo "sudo pg_createcluster --start -p $port $(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1) main" >&2
    exit 1
  fi
  if $dry_run; then
    echo "would start: PostgreSQL $cluster on port $port"
    return 0
  fi
  say "starting PostgreSQL $cluster on port $port"
  if [ "$(root_runner)" = none ]; then
    say "starting it needs root; run this once, then the same make command again:"
    echo "sudo pg_ctlcluster --skip-systemctl-redirect $cluster start" >&2
    exit 1
  fi
  # shellcheck disable=SC2086 # "$cluster" is two arguments: version and name
  as_root pg_ctlcluster --skip-systemctl-redirect $cluster start
  wait_for env PATH="$search_path" pg_isready -q -h "$host" -p "$port" || {
    say "PostgreSQL $cluster did not come up on port $port"
    exit 1
  }
}

ensure_redis() {
  local url="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
  local host port
  host="$(url_host "$url")"
  port="$(url_port "$url" 6379)"
  if ! is_local "$host"; then
    say "Redis at $host:$port is not on this machine: not starting it"
    return 0
  fi
  install_packages redis-server redis-tools
  if has_command redis-cli && PATH="$search_path" redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; then
    return 0
  fi
  if $dry_run; then
    echo "would start: redis-server on 127.0.0.1:$port"
    return 0
  fi
  say "starting redis-server on 127.0.0.1:$port (no persistence)"
  # Started as the calling user: a test server needs no root and no data on disk.
  (cd / && PATH="$search_path" redis-server --daemonize yes --bind 127.0.0.1 --port "$port" \
    --save "" --appendonly no >/dev/null)
  wait_for env PATH="$search_path" redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null || {
    say "redis-server did not come up on port $port"
    exit 1
  }
}

usage() {
  sed -n '2,12p' "$script" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

if [ "${1:-}" = --dry-run ]; then
  dry_run=true
  shift
fi
case "${1:-}" in
  packages)
    shift
    install_packages "$@"
    ;;
  services)
    ensure_postgresql
    ensure_redis
    ;;
  *) usage ;;
esac
